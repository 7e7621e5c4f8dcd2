"""Pseudo-questions whose gold is several definitions, mined from one
package's index (and its README/manual, --docs), for mine_ranker.py. Each
miner returns (text, gold, own): the question's text before paraphrase, the
gold definitions ({"path", "symbol", "start", "end"}) and the identifiers
paraphrase removes (every gold definition's name, as the text writes it).

  refs     a doc comment naming other definitions of the package -> it and them
  calls    a test (its doc comment's first sentences, else its name's words)
           -> the 2 to 5 non-test definitions it calls
  module   a module's doc comment -> the definitions it names, else the
           file's public definitions when there are 2 to 5
  section  a README/manual section -> the definitions its code names
"""
import gzip
import os
import re

KIND_MODULE, KIND_CLASS, KIND_FUNCTION, KIND_METHOD = 0, 1, 2, 3
EDGE_CALL = 1
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
MAX_GOLD = 5
MAX_WORDS = 40


def is_identifier_shaped(tok):
    """A token that reads as code, not as an English word: snake_case,
    camelCase or dotted."""
    return "_" in tok.strip("_") or "." in tok or re.search(r"[a-z][A-Z]", tok) is not None


def sentences(text, n=2):
    """The first n sentences of prose, at most MAX_WORDS words; code
    examples (doctest prompts, indented blocks after '::') are left out."""
    out = []
    for line in text.splitlines():
        t = line.strip()
        if t.startswith((">>>", "...", "$ ", "```", "..", "|")) or t.endswith("::"):
            break
        out.append(t)
    prose = re.sub(r"\s+", " ", " ".join(out)).strip()
    parts = re.findall(r".+?[.!?](?:\s|$)|.+$", prose)
    words = " ".join(p.strip() for p in parts[:n]).split()
    return " ".join(words[:MAX_WORDS])


class Package:
    """What the miners read from one package's index: definitions by name
    (unambiguous ones only: at most two non-test definitions per name), and
    each definition's span, file and doc comment."""

    def __init__(self, db, files, spans, rows, is_test, excluded):
        self.db, self.files, self.spans, self.rows = db, files, spans, rows
        self.is_test, self.excluded = is_test, excluded
        self.by_id = {r[0]: r for r in rows}
        self.by_name = {}
        for cid, fid, sym, nm, doc, kind in rows:
            path = files[fid]
            if is_test(path) or excluded(path):
                continue
            self.by_name.setdefault(sym.split(".")[-1], []).append(cid)
            if "." in sym:
                self.by_name.setdefault(sym, []).append(cid)

    def gold(self, cid):
        _, fid, sym, _, _, _ = self.by_id[cid]
        a, b = self.spans[(fid, sym)]
        return {"path": self.files[fid], "symbol": sym, "start": a, "end": b}

    def named_in(self, text, code_only=False):
        """Definitions a text names: identifiers that resolve to one or two
        definitions, identifier-shaped or written as code (backquotes, a
        call's parentheses); returns (chunk ids, the tokens as written)."""
        found, toks = [], []
        for m in IDENT.finditer(text):
            tok = m.group(0)
            before = text[m.start() - 1] if m.start() else ""
            after = text[m.end()] if m.end() < len(text) else ""
            as_code = before in "`'\"" or after in "`(" or code_only
            if len(tok.split(".")[-1]) < 4 or not (as_code or is_identifier_shaped(tok)):
                continue
            ids = self.by_name.get(tok) or self.by_name.get(tok.split(".")[-1]) or []
            if not 1 <= len(ids) <= 2:
                continue
            toks.append(tok)
            for cid in ids:
                if cid not in found:
                    found.append(cid)
        return found, toks


def own_names(pkg, cids, toks):
    own = list(toks)
    for cid in cids:
        sym = pkg.by_id[cid][2]
        own += sym.split(".") + [sym]
    return own


def refs(pkg, _docs):
    out = []
    for cid, fid, sym, nm, doc, kind in pkg.rows:
        path = pkg.files[fid]
        if not doc or pkg.is_test(path) or pkg.excluded(path):
            continue
        text = sentences(doc, 3)
        named, toks = pkg.named_in(text)
        # another definition of its own name (an overload, an interface's
        # method) is not one it names
        named = [c for c in named if pkg.by_id[c][2].split(".")[-1] != sym.split(".")[-1]]
        if not named or len(named) + 1 > MAX_GOLD:
            continue
        cids = [cid] + named
        out.append((text, [pkg.gold(c) for c in cids], own_names(pkg, cids, toks)))
    return out


def calls(pkg, _docs):
    out = []
    for cid, fid, sym, nm, doc, kind in pkg.rows:
        path = pkg.files[fid]
        last = sym.split(".")[-1]
        if not pkg.is_test(path) or kind == KIND_CLASS or not last.lower().startswith("test"):
            continue
        cids = []
        for (dst,) in pkg.db.execute("SELECT DISTINCT dst FROM edges WHERE src = ? AND kind = ?",
                                     (cid, EDGE_CALL)):
            r = pkg.by_id.get(dst)
            if r and not pkg.is_test(pkg.files[r[1]]) and not pkg.excluded(pkg.files[r[1]]):
                cids.append(dst)
        if not 2 <= len(cids) <= MAX_GOLD:
            continue
        words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+", last)
        text = sentences(doc, 2) if doc else " ".join(w.lower() for w in words
                                                        if w.lower() != "test")
        out.append((text, [pkg.gold(c) for c in cids], own_names(pkg, cids, [])))
    return out


def module(pkg, _docs):
    out = []
    tops = {}
    for cid, fid, sym, nm, doc, kind in pkg.rows:
        if "." not in sym and not sym.startswith("_") and kind in (KIND_CLASS, KIND_FUNCTION):
            tops.setdefault(fid, []).append(cid)
    for fid, doc in pkg.db.execute("SELECT file_id, docstring FROM chunks WHERE kind = ? AND "
                                   "docstring != '' AND cont = 0", (KIND_MODULE,)):
        path = pkg.files[fid]
        if pkg.is_test(path) or pkg.excluded(path):
            continue
        text = sentences(doc, 2)
        cids, toks = pkg.named_in(text)
        if len(cids) < 2:
            cids = tops.get(fid, [])
        if not 2 <= len(cids) <= MAX_GOLD:
            continue
        out.append((text, [pkg.gold(c) for c in cids], own_names(pkg, cids, toks)))
    return out


def doc_files(root):
    for d, _, names in os.walk(root):
        for f in sorted(names):
            low = f.lower()
            if re.search(r"\.(md|markdown|rst|txt)(\.gz)?$", low) and \
                    not re.search(r"license|copying|changelog|changes|news|security|authors|"
                                  r"requires|top_level|dependency|entry_points|cmakelists", low):
                yield os.path.join(d, f)


def read_text(path):
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def split_sections(text):
    """(heading, body) of each Markdown (#) or reST (underlined) section."""
    lines = text.splitlines()
    out, head, body = [], "", []
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if re.match(r"#{1,6}\s", line):
            out.append((head, body))
            head, body = line.lstrip("#").strip(), []
        elif line.strip() and re.fullmatch(r"([=\-~^*+#])\1{2,}", nxt.strip()) and \
                len(nxt.strip()) >= len(line.strip()) - 2:
            out.append((head, body))
            head, body = line.strip(), []
        elif re.fullmatch(r"([=\-~^*+#])\1{2,}", line.strip()):
            continue
        else:
            body.append(line)
    out.append((head, body))
    return [(h, "\n".join(b)) for h, b in out if h]


def section(pkg, docs):
    out = []
    if not docs or not os.path.isdir(docs):
        return out
    for path in doc_files(docs):
        for head, body in split_sections(read_text(path)):
            # the names a section's code uses: code blocks, code spans
            code = "\n".join(re.findall(r"```.*?```|`[^`\n]+`|^(?: {4}|\t).*$", body,
                                        re.S | re.M))
            cids, toks = pkg.named_in(code, code_only=True)
            if not 2 <= len(cids) <= MAX_GOLD:
                continue
            prose = re.sub(r"```.*?```", " ", body, flags=re.S)
            prose = "\n".join(l for l in prose.splitlines()
                              if l.strip() and not l.startswith(("    ", "\t")))
            text = (head.rstrip(".:") + ". " + sentences(prose, 2)).strip()
            out.append((text, [pkg.gold(c) for c in cids], own_names(pkg, cids, toks)))
    return out


MINERS = {"refs": refs, "calls": calls, "module": module, "section": section}
