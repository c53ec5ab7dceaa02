# run in a copy of catalog/ by run.sh (git cannot hold these)
set -e
python3 -c 'import sys; sys.stdout.write("".join("---\nschema: example.com/n\nname: n%d\n" % i for i in range(20000)))' > many.yaml
