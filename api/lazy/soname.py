#!/usr/bin/env python3
"""Print the SONAME of a shared library the C compiler links with -lNAME.

    soname.py NAME [EXTRA_DIR...] -- CC [CC_ARGS...]

Finds libNAME.so with `CC -print-file-name=libNAME.so`, then in each
EXTRA_DIR (e.g. pkg-config's libdir), and reads DT_SONAME from its dynamic
section. Used at configure time by api/lazy/meson.build; exits 1 with a
message naming the file when there is no shared library or no SONAME.
"""
import os
import struct
import subprocess
import sys

DT_SONAME = 14
SHT_DYNAMIC = 6


def soname(path):
    with open(path, 'rb') as f:
        data = f.read()
    if data[:4] != b'\x7fELF':
        raise ValueError('not an ELF file (a linker script?)')
    is64 = data[4] == 2
    end = '<' if data[5] == 1 else '>'
    if is64:
        shoff, = struct.unpack_from(end + 'Q', data, 0x28)
        shentsize, shnum = struct.unpack_from(end + 'HH', data, 0x3A)
        sh_fmt, dyn_fmt = end + 'IIQQQQIIQQ', end + 'qQ'
    else:
        shoff, = struct.unpack_from(end + 'I', data, 0x20)
        shentsize, shnum = struct.unpack_from(end + 'HH', data, 0x2E)
        sh_fmt, dyn_fmt = end + 'IIIIIIIIII', end + 'iI'
    sections = [struct.unpack_from(sh_fmt, data, shoff + i * shentsize) for i in range(shnum)]
    for sh in sections:
        if sh[1] != SHT_DYNAMIC:
            continue
        offset, size, link = sh[4], sh[5], sh[6]
        strtab = sections[link][4]
        step = struct.calcsize(dyn_fmt)
        for at in range(offset, offset + size, step):
            tag, val = struct.unpack_from(dyn_fmt, data, at)
            if tag == DT_SONAME:
                start = strtab + val
                return data[start:data.index(b'\0', start)].decode()
            if tag == 0:
                break
    raise ValueError('no DT_SONAME in its dynamic section')


def main(argv):
    if '--' not in argv or argv.index('--') < 2:
        sys.exit('usage: soname.py NAME [EXTRA_DIR...] -- CC [CC_ARGS...]')
    sep = argv.index('--')
    name, dirs, cc = argv[1], argv[2:sep], argv[sep + 1:]
    file = 'lib' + name + '.so'
    candidates = []
    try:
        out = subprocess.run(cc + ['-print-file-name=' + file], capture_output=True,
                             text=True, check=True).stdout.strip()
        if os.path.isabs(out):
            candidates.append(out)
    except (OSError, subprocess.CalledProcessError):
        pass
    candidates += [os.path.join(d, file) for d in dirs if d]
    for path in candidates:
        if os.path.exists(path):
            try:
                print(soname(os.path.realpath(path)))
                return 0
            except (ValueError, struct.error, IndexError) as e:
                sys.exit('soname.py: %s: %s' % (path, e))
    sys.exit('soname.py: %s not found (looked with %s -print-file-name and in %s)'
             % (file, ' '.join(cc), ', '.join(dirs) or 'no other directory'))


if __name__ == '__main__':
    sys.exit(main(sys.argv))
