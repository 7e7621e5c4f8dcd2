"""Trains the builtin embedder: a weighted bag of token embeddings.

    train.py PAIRS_JSONL OUT_MODEL [--dim 128] [--epochs 8] [--seed 1]

A text's vector is the weighted mean of its tokens' embeddings (one table
shared by both sides; one learnt weight per token and side, so questions
and code may value the same word differently), L2-normalised. Trained with
an in-batch contrastive loss on (question, code) pairs; the packages whose
name hashes into the held-out slice are never trained on and give the MRR
reported (each held-out pair ranked against 999 others, as CodeSearchNet
does). The model file format is described in index/dense/embed_builtin.c.
"""
import argparse
import hashlib
import json
import random
import struct
import sys
import time

import numpy as np
import torch

MAGIC = b"CRNBOW\0\0"
VERSION = 1
HEADER = struct.Struct("<8sIIIIQQ32s32s")
MAX_VOCAB = 60000
MIN_COUNT = 3
MAX_TOKENS = 128  # tokens of a text used, here and by the C side (header)


def held_out(pkg):
    return hashlib.sha1(pkg.encode()).digest()[0] % 20 == 0


def fnv64_words(payload):
    assert len(payload) % 8 == 0
    words = np.frombuffer(payload, dtype="<u8")
    h = 0xcbf29ce484222325
    prime = 0x100000001b3
    mask = (1 << 64) - 1
    for w in words.tolist():
        h = ((h ^ w) * prime) & mask
    return h


def encode(emb, w, ids, offsets, sparse=False):
    weights = torch.nn.functional.softplus(w[ids])
    s = torch.nn.functional.embedding_bag(ids, emb, offsets, mode="sum", per_sample_weights=weights,
                                          sparse=sparse)
    v = torch.nn.functional.normalize(s, dim=1)
    return v


def batchify(seqs):
    ids, offsets = [], []
    for s in seqs:
        offsets.append(len(ids))
        ids.extend(s if s else [0])
    return torch.tensor(ids, dtype=torch.long), torch.tensor(offsets, dtype=torch.long)


def mrr(emb, w_q, w_c, pairs, pool=1000):
    ranks = []
    with torch.no_grad():
        for at in range(0, len(pairs) - pool + 1, pool):
            chunk = pairs[at:at + pool]
            q = encode(emb, w_q, *batchify([p[0] for p in chunk]))
            c = encode(emb, w_c, *batchify([p[1] for p in chunk]))
            sims = q @ c.T
            gold = sims.diag().unsqueeze(1)
            rank = (sims > gold).sum(1) + 1
            ranks.extend((1.0 / rank.float()).tolist())
    return sum(ranks) / len(ranks) if ranks else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pairs")
    ap.add_argument("out")
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--temp", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--name", default="nbow-py-v1")
    a = ap.parse_args()
    torch.set_num_threads(1)
    random.seed(a.seed)
    np.random.seed(a.seed)
    torch.manual_seed(a.seed)

    digest = hashlib.sha256(open(a.pairs, "rb").read()).digest()
    train, test = [], []
    seen = set()
    for line in open(a.pairs):
        r = json.loads(line)
        key = " ".join(r["c"])
        if key in seen:  # harvest parts dedup only within themselves
            continue
        seen.add(key)
        (test if held_out(r["pkg"]) else train).append((r["q"], r["c"], r["kind"]))
    counts = {}
    for q, c, _ in train:
        for t in q + c:
            counts[t] = counts.get(t, 0) + 1
    vocab = sorted((t for t, n in counts.items() if n >= MIN_COUNT and len(t.encode()) <= 255),
                   key=lambda t: (-counts[t], t))[:MAX_VOCAB]
    index = {t: i for i, t in enumerate(vocab)}
    V = len(vocab)

    def ids(seq):
        return [index[t] for t in seq[:MAX_TOKENS] if t in index]

    train_ids = [(ids(q), ids(c)) for q, c, _ in train]
    train_ids = [p for p in train_ids if p[0] and p[1]]
    test_doc = [(ids(q), ids(c)) for q, c, k in test if k == "doc"]
    test_doc = [p for p in test_doc if p[0] and p[1]]
    random.Random(a.seed).shuffle(test_doc)
    print("pairs: %d train, %d held out (doc), vocab %d, dim %d" % (len(train_ids), len(test_doc), V, a.dim),
          flush=True)

    emb = torch.nn.Parameter(torch.randn(V, a.dim) * 0.1)
    w_q = torch.nn.Parameter(torch.zeros(V))
    w_c = torch.nn.Parameter(torch.zeros(V))
    # Sparse updates of the table: a batch touches a few thousand of its rows.
    opt_emb = torch.optim.SparseAdam([emb], lr=a.lr)
    opt = torch.optim.Adam([w_q, w_c], lr=a.lr)
    rng = random.Random(a.seed)
    t0 = time.time()
    for epoch in range(a.epochs):
        rng.shuffle(train_ids)
        total = 0.0
        steps = 0
        for at in range(0, len(train_ids) - a.batch + 1, a.batch):
            chunk = train_ids[at:at + a.batch]
            q = encode(emb, w_q, *batchify([p[0] for p in chunk]), sparse=True)
            c = encode(emb, w_c, *batchify([p[1] for p in chunk]), sparse=True)
            logits = q @ c.T / a.temp
            target = torch.arange(len(chunk))
            loss = (torch.nn.functional.cross_entropy(logits, target) +
                    torch.nn.functional.cross_entropy(logits.T, target)) / 2
            opt.zero_grad()
            opt_emb.zero_grad()
            loss.backward()
            opt.step()
            opt_emb.step()
            total += loss.item()
            steps += 1
        print("epoch %d: loss %.3f, held-out MRR %.3f (%.0f s)" %
              (epoch + 1, total / max(steps, 1), mrr(emb, w_q, w_c, test_doc), time.time() - t0), flush=True)

    with torch.no_grad():
        e = emb.detach().numpy().astype(np.float32)
        scale = np.maximum(np.abs(e).max(axis=1), 1e-12) / 127.0
        q8 = np.clip(np.rint(e / scale[:, None]), -127, 127).astype(np.int8)
        wq = torch.nn.functional.softplus(w_q).numpy().astype(np.float32)
        wc = torch.nn.functional.softplus(w_c).numpy().astype(np.float32)
        deq = torch.tensor(q8.astype(np.float32) * scale[:, None])
        print("held-out MRR with int8 weights: %.3f" %
              mrr(deq, torch.log(torch.expm1(torch.tensor(wq))), torch.log(torch.expm1(torch.tensor(wc))),
                  test_doc))
    payload = bytearray()
    payload += wq.astype("<f4").tobytes()
    payload += wc.astype("<f4").tobytes()
    payload += scale.astype("<f4").tobytes()
    payload += q8.tobytes()
    for t in vocab:
        b = t.encode()
        payload += bytes([len(b)]) + b
    payload += b"\0" * (-len(payload) % 8)
    name = a.name.encode()[:31].ljust(32, b"\0")
    header = HEADER.pack(MAGIC, VERSION, a.dim, V, MAX_TOKENS, len(payload), fnv64_words(bytes(payload)), digest, name)
    with open(a.out, "wb") as f:
        f.write(header)
        f.write(payload)
    print("wrote %s: %d bytes, training data sha256 %s" % (a.out, len(header) + len(payload), digest.hex()))


if __name__ == "__main__":
    sys.exit(main())
