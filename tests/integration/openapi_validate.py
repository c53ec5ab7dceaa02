#!/usr/bin/env python3
"""Validate real fbcd responses against the schemas of its OpenAPI document.

    openapi_validate.py BASE_URL DOC_JSON PATH...

Each PATH (with its query string) is fetched with GET; an argument of the
form "METHOD PATH BODY_FILE" sends that method with the file as a JSON body
(and the body is also checked against the operation's request schema). The
response's status and media type select the schema in the document (the
operation is found by matching PATH against the path templates), and the
JSON body is checked against it with the subset of JSON Schema 2020-12 the
document uses: $ref, type (also a list), required, properties,
additionalProperties, items, allOf, oneOf, const, enum, minimum, maximum,
maxLength. Standard library only.
Prints one line per failure; exit 1 if any.
"""
import json
import re
import sys
import http.client
import urllib.error
import urllib.parse
import urllib.request

TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def resolve(doc, node):
    while isinstance(node, dict) and "$ref" in node:
        ref = node["$ref"]
        assert ref.startswith("#/"), ref
        target = doc
        for part in ref[2:].split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        node = target
    return node


def check(doc, schema, value, where, errors):
    schema = resolve(doc, schema)
    if not isinstance(schema, dict):
        return
    for sub in schema.get("allOf", []):
        check(doc, sub, value, where, errors)
    if "oneOf" in schema:
        results = []
        for sub in schema["oneOf"]:
            errs = []
            check(doc, sub, value, where, errs)
            results.append(errs)
        ok = sum(1 for r in results if not r)
        if ok != 1:
            errors.append(f"{where}: matches {ok} of the oneOf schemas, not exactly one")
            for r in results:
                errors.extend(r[:2])
    if "const" in schema and value != schema["const"]:
        errors.append(f"{where}: {value!r} is not {schema['const']!r}")
    t = schema.get("type")
    if t is not None:
        types = t if isinstance(t, list) else [t]
        if not any(TYPES[x](value) for x in types):
            errors.append(f"{where}: {json.dumps(value)[:80]} is not {'/'.join(types)}")
            return
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{where}: {value!r} not in {schema['enum']}")
    if isinstance(value, str) and "maxLength" in schema and len(value) > schema["maxLength"]:
        errors.append(f"{where}: longer than {schema['maxLength']}")
    if TYPES["number"](value):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{where}: {value} < {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{where}: {value} > {schema['maximum']}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for k in schema.get("required", []):
            if k not in value:
                errors.append(f"{where}: missing required '{k}'")
        for k, v in value.items():
            if k in props:
                check(doc, props[k], v, f"{where}.{k}", errors)
            elif schema.get("additionalProperties") is False:
                errors.append(f"{where}: unexpected member '{k}'")
            elif isinstance(schema.get("additionalProperties"), dict):
                check(doc, schema["additionalProperties"], v, f"{where}.{k}", errors)
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            check(doc, schema["items"], v, f"{where}[{i}]", errors)


def find_operation(doc, path, method="get"):
    for template, ops in doc["paths"].items():
        rx = "^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)) + "$"
        if re.match(rx, path) and method in ops:
            return template, ops[method]
    return None, None


def early_answer(url, method, data):
    """Send a request whose body the server may refuse part-way; return the answer."""
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    conn.putrequest(method, u.path + ("?" + u.query if u.query else ""))
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Content-Length", str(len(data)))
    conn.endheaders()
    try:
        conn.send(data)
    except (BrokenPipeError, ConnectionResetError):
        pass
    r = conn.getresponse()
    answer = r.status, r.getheader("Content-Type", ""), r.read()
    conn.close()
    return answer


def main():
    base, doc_path, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
    doc = json.load(open(doc_path))
    failures = 0
    checked = 0
    for arg in paths:
        method, full, data = "GET", arg, None
        if " " in arg:
            method, full, body_file = arg.split(" ", 2)
            data = open(body_file, "rb").read()
        path = full.split("?", 1)[0]
        template, op = find_operation(doc, path, method.lower())
        if op is None:
            print(f"{full}: no {method} operation in the document")
            failures += 1
            continue
        request = urllib.request.Request(base + full, data=data, method=method)
        req_errors = []
        if data is not None:
            request.add_header("Content-Type", "application/json")
            schema = op.get("requestBody", {}).get("content", {}).get("application/json", {})
            try:
                sent = json.loads(data)
            except ValueError:
                sent = None  # a deliberately malformed body
            if sent is not None and "schema" in schema:
                check(doc, schema["schema"], sent, "request", req_errors)
        try:
            with urllib.request.urlopen(request) as r:
                status, ctype, body = r.status, r.headers.get("Content-Type", ""), r.read()
        except urllib.error.HTTPError as e:
            status, ctype, body = e.code, e.headers.get("Content-Type", ""), e.read()
        except urllib.error.URLError as e:
            if not isinstance(e.reason, (BrokenPipeError, ConnectionResetError)):
                raise
            # The server answered (413) before the whole body was sent and
            # closed the connection, as it should; read that early answer.
            status, ctype, body = early_answer(base + full, method, data)
        if status < 300 and req_errors:
            # the server accepted a body its documented schema rejects
            print(f"{method} {full}: accepted, but the request schema says: {req_errors[0]}")
            failures += 1
        resp = resolve(doc, op["responses"].get(str(status)))
        if resp is None and status >= 400:
            resp = resolve(doc, op["responses"].get("default"))
        if resp is None:
            print(f"{full}: status {status} is not documented for {template}")
            failures += 1
            continue
        media = ctype.split(";")[0].strip()
        content = resp.get("content", {})
        if media not in content and media.split("/")[0] + "/*" in content:
            media = media.split("/")[0] + "/*"
        if media not in content:
            print(f"{full}: {status} {media} is not documented (have {sorted(content)})")
            failures += 1
            continue
        if not media.endswith("json"):
            checked += 1
            continue
        errors = []
        check(doc, content[media]["schema"], json.loads(body), "$", errors)
        for e in errors[:5]:
            print(f"{full}: {e}")
        failures += bool(errors)
        checked += 1
    print(f"{checked} responses checked against the OpenAPI schemas, {failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
