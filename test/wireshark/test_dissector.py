#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Decode amrma-pcapgen output with tshark + scripts/wireshark/amrma.lua and check that
every decoded field equals what the generator says it wrote (its --manifest).

Exit 77 (meson: skipped) only when tshark is not installed."""

import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

FIELDS = ['frame.number', 'frame.len', 'amrma.version', 'amrma.type', 'amrma.flags',
          'amrma.nargs', 'amrma.handler', 'amrma.src_ctx', 'amrma.dst_ctx',
          'amrma.src_node', 'amrma.dst_node', 'amrma.seq', 'amrma.ack', 'amrma.sack',
          'amrma.token', 'amrma.payload_len', 'amrma.status', 'amrma.src_epoch',
          'amrma.dst_epoch', 'amrma.arg',
          'amrma.payload', '_ws.expert.message']
# manifest key -> tshark field, compared as integers
INT_FIELDS = {k: 'amrma.' + k for k in (
    'type', 'flags', 'nargs', 'handler', 'src_ctx', 'dst_ctx', 'src_node', 'dst_node',
    'seq', 'ack', 'sack', 'token', 'payload_len', 'status', 'src_epoch', 'dst_epoch')}
# expert message the dissector must raise on a frame of this bad variant (or reason)
EXPERT = {
    'bad_version': 'Unknown amrma version',
    'bad_type': 'Unknown frame type',
    'bad_flags': 'Reserved flag bits set',
    'too_many_args': 'More than 8 arguments',
    'payload_len_plus_1': 'UDP payload length differs',
    'payload_9001': 'Payload over 9000 bytes',
    'ack_with_args': 'ACK carries arguments or payload',
    'bad_handler': 'Handler not allowed here',
    'bad_ctx': 'Context differs from UDP port',
}
AMRMA_OFF = 14 + 20 + 8 + 40   # first argument byte


def num(s):
    return int(s, 16) if s.startswith('0x') else int(s)


def read_pcap(path):
    """Frames of a little-endian classic pcap (what amrma-pcapgen writes)."""
    with open(path, 'rb') as f:
        data = f.read()
    magic, major, _, _, _, _, link = struct.unpack_from('<IHHiIII', data, 0)
    assert magic == 0xa1b2c3d4 and major == 2 and link == 1, 'not an Ethernet pcap'
    off, frames = 24, []
    while off < len(data):
        _, _, incl, _ = struct.unpack_from('<IIII', data, off)
        frames.append(data[off + 16:off + 16 + incl])
        off += 16 + incl
    return frames


def tshark(lua, pcap, prefs=()):
    cmd = ['tshark', '-n', '-X', 'lua_script:' + lua, '-r', pcap, '-T', 'fields',
           '-E', 'separator=/t', '-E', 'occurrence=a', '-E', 'aggregator=|']
    for p in prefs:
        cmd += ['-o', p]
    for fld in FIELDS:
        cmd += ['-e', fld]
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         check=False)
    if res.returncode != 0:
        sys.exit('tshark failed (%d): %s' % (res.returncode, res.stderr))
    rows = []
    for line in res.stdout.splitlines():
        vals = line.split('\t')
        vals += [''] * (len(FIELDS) - len(vals))
        rows.append(dict(zip(FIELDS, vals)))
    return rows


def generate(pcapgen, tmp, name, opts):
    pcap = os.path.join(tmp, name + '.pcap')
    manifest = os.path.join(tmp, name + '.json')
    subprocess.run([pcapgen, '--out', pcap, '--manifest', manifest] + opts, check=True,
                   stderr=subprocess.DEVNULL)
    with open(manifest) as f:
        return pcap, json.load(f)


def check_good(rec, row, frame, errors):
    where = 'frame %d (%s)' % (rec['i'] + 1, rec['variant'])
    if row['amrma.version'] != '1':
        errors.append('%s: version %r' % (where, row['amrma.version']))
        return
    for key, fld in INT_FIELDS.items():
        if num(row[fld]) != rec[key]:
            errors.append('%s: %s decoded %s, generated %s' % (where, key, row[fld], rec[key]))
    args = [num(a) for a in row['amrma.arg'].split('|') if a]
    if args != [int(a, 16) for a in rec['args']]:
        errors.append('%s: args %s, generated %s' % (where, row['amrma.arg'], rec['args']))
    start = AMRMA_OFF + 8 * rec['nargs']
    want = frame[start:start + rec['payload_len']].hex()
    if row['amrma.payload'].replace(':', '') != want:
        errors.append('%s: payload differs' % where)
    if int(row['frame.len']) != rec['len'] or row['_ws.expert.message']:
        errors.append('%s: len %s / expert %r' % (where, row['frame.len'],
                                                 row['_ws.expert.message']))


def check(pcap, manifest, rows, errors):
    frames = read_pcap(pcap)
    recs = manifest['records']
    if not len(rows) == len(frames) == len(recs) == manifest['totals']['frames']:
        errors.append('%s: %d rows, %d frames, %d records' % (pcap, len(rows), len(frames),
                                                                len(recs)))
        return
    for rec, row, frame in zip(recs, rows, frames):
        if rec['expect'] == 'ok':
            check_good(rec, row, frame, errors)
            continue
        msg = EXPERT.get(rec['variant'], EXPERT.get(rec['expect']))
        if msg and msg not in row['_ws.expert.message']:
            errors.append('frame %d (%s/%s): no "%s" expert, got %r' % (
                rec['i'] + 1, rec['expect'], rec['variant'], msg, row['_ws.expert.message']))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--pcapgen', required=True)
    ap.add_argument('--lua', required=True)
    a = ap.parse_args()
    if shutil.which('tshark') is None:
        print('tshark not installed: skipped')
        return 77

    errors = []
    tmp = tempfile.mkdtemp(prefix='amrma-tshark-')
    try:
        pcap, man = generate(a.pcapgen, tmp, 'good', ['--kind', 'good', '--count', '45'])
        check(pcap, man, tshark(a.lua, pcap), errors)

        # non-default base: decoded only once the preference says so
        pcap, man = generate(a.pcapgen, tmp, 'mixed', [
            '--kind', 'mixed', '--count', '40', '--seed', '3', '--udp-base', '9000',
            '--nb-ctx', '2', '--dst-node', '9', '--handler', '255',
            '--src-epoch', '4294967295', '--dst-epoch', '12345'])
        check(pcap, man, tshark(a.lua, pcap, ['amrma.udp_base:9000']), errors)
        if any(r['amrma.version'] for r in tshark(a.lua, pcap)):
            errors.append('base 9000 frames decoded as amrma without the preference')
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    for e in errors[:50]:
        print(e)
    print('%d error(s)' % len(errors))
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
