# run in a copy of catalog/ by run.sh (git cannot hold these)
set -e
python3 -c "import json,sys
def w(objs): sys.stdout.write(''.join(json.dumps(o)+'\n' for o in objs))
n=100000
w([{'schema':'olm.package','name':'foo','defaultChannel':'s'},{'schema':'olm.channel','package':'foo','name':'s','entries':[{'name':'x%06d' % (n-i)} for i in range(n)]}]+[{'schema':'olm.bundle','package':'foo','name':'x%06d' % (n-i),'image':'quay.io/a/b:1','properties':[{'type':'olm.package','value':{'packageName':'foo','version':'1.0.%d' % i}}]} for i in range(n)])" > c.json
