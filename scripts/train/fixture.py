"""Writes the C side's parity fixtures from the Python side.

    fixture.py MODEL OUT_DIR

OUT_DIR/tokens.jsonl: {"text", "tokens"} for a few hundred strings (edge
cases, lines of installed Python sources, questions), tokens as toks.py
emits them, space-joined. OUT_DIR/vectors.jsonl: {"text", "query", "vec"}
for a few texts, embedded with the model file read independently of the C
loader. tests/unit/test_embed_builtin.c compares both with the C code.
"""
import glob
import json
import os
import random
import struct
import sys

import toks

EDGE = [
    "", "x", "_", "__init__", "HTTPServer", "getHTTPResponseCode", "ABc", "a1b2", "405 Method",
    "MethodNotAllowed", "allowed_methods", "snake_case_name", "CamelCase", "XMLHttpRequest",
    "café naïve Über", "日本語 text", "x1y2z3", "0x1F", "1e10", "foo.bar.Baz()", "self._private_attr",
    "__dunder__method__", "A", "AB", "ABC_DEF", "_9lives", "t\u00e9st_M\u00e9thod", "ąę_ść", "$%^&*",
    "tab\tseparated\nlines", "can't won't", "URLs like http://example.com/a_b?c=D",
    "How does the server reject a request whose method is not allowed?",
    "Where are template loaders chosen?", "iOS macOS IPv6Address", "utf8Decode UTF8Decoder",
]


def sources():
    files = sorted(glob.glob("/usr/lib/python3/dist-packages/*/*.py"))
    rng = random.Random(7)
    rng.shuffle(files)
    out = []
    for path in files[:60]:
        try:
            lines = open(path, encoding="utf-8").read().splitlines()
        except (UnicodeDecodeError, OSError):
            continue
        lines = [l for l in lines if l.strip()]
        for l in rng.sample(lines, min(4, len(lines))):
            out.append(l[:300])
    return out


def read_model(path):
    d = open(path, "rb").read()
    magic, version, dim, vocab, max_tokens, payload, _, _, name = struct.unpack_from("<8sIIIIQQ32s32s", d)
    assert magic == b"CRNBOW\0\0" and version == 1
    off = 104
    f = lambda n, o: list(struct.unpack_from("<%df" % n, d, o))
    wq, wc, scale = f(vocab, off), f(vocab, off + 4 * vocab), f(vocab, off + 8 * vocab)
    emb_off = off + 12 * vocab
    p = emb_off + vocab * dim
    index = {}
    for i in range(vocab):
        n = d[p]
        index[d[p + 1:p + 1 + n]] = i
        p += 1 + n
    return dim, max_tokens, wq, wc, scale, d, emb_off, index


def embed(model, text, query):
    dim, max_tokens, wq, wc, scale, d, emb_off, index = model
    w = wq if query else wc
    v = [0.0] * dim
    ts = toks.tok_code(text)
    if max_tokens:
        ts = ts[:max_tokens]
    for t in ts:
        i = index.get(t)
        if i is None:
            continue
        row = struct.unpack_from("<%db" % dim, d, emb_off + i * dim)
        f = w[i] * scale[i]
        for k in range(dim):
            v[k] += f * row[k]
    n = sum(x * x for x in v) ** 0.5
    return [x / n for x in v] if n > 0 else v


def main():
    model_path, out_dir = sys.argv[1:3]
    os.makedirs(out_dir, exist_ok=True)
    texts = EDGE + sources()
    with open(os.path.join(out_dir, "tokens.jsonl"), "w") as f:
        for t in texts:
            f.write(json.dumps({"text": t, "tokens": " ".join(x.decode("utf-8") for x in toks.tok_code(t))},
                               ensure_ascii=False) + "\n")
    model = read_model(model_path)
    samples = [(EDGE[32], True), (EDGE[33], True), ("def parse_header(value):\n    return value.split(';')", False),
               ("class MethodNotAllowed(HTTPException):\n    code = 405", False), ("zzqqxx unknownword", True),
               ("".join("def handler_%d(request, allowed_methods):\n    return check(request.method)\n" % i
                        for i in range(60)), False)]
    with open(os.path.join(out_dir, "vectors.jsonl"), "w") as f:
        for t, q in samples:
            f.write(json.dumps({"text": t, "query": q, "vec": embed(model, t, q)}) + "\n")
    print("wrote %d token cases, %d vectors to %s" % (len(texts), len(samples), out_dir))


if __name__ == "__main__":
    main()
