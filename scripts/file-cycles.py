#!/usr/bin/python3
"""Cycles between the files of each library (issue 15's "no cycle between
files of one library"): from a build's object files, file A depends on file
B when A uses a symbol B defines. Calls through registered function
pointers count too (from the sources, see pointer_edges): file A depends on
file B when A calls through a pointer that a function of B was registered
in - a method table handed to A, a function passed to one of A's
functions, a struct field A calls through (`m->fn(...)`). Prints each
strongly connected group of two or more files and the symbols of each edge
inside it (`*name`: through a pointer).

    scripts/file-cycles.py [--strict] [--edges] [--source DIR] [BUILD_DIR]     (default: build)

Exits 1 on a cycle of direct calls; with --strict, also on one that calls
through registered function pointers close (a framework calling its
handlers, which call the framework back, is one). --edges lists every
call through a pointer found.
"""
import collections
import glob
import os
import re
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIBS = ["base", "index", "verify", "retrieve", "workspace", "rpc", "mcp", "lsp", "cli"]
TARGET = {}  # a folder's library is coderag_<folder> (cli/main.c alone is the program)


def symbols(obj):
    defined, used = set(), set()
    for line in subprocess.check_output(["nm", obj], text=True).splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "TDRB":
            defined.add(p[2])
        elif len(p) == 2 and p[0] == "U":
            used.add(p[1])
    return defined, used


def groups(graph):
    """Tarjan's strongly connected components of two or more nodes."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in list(graph):
        if v not in index:
            visit(v)
    return out


# ---------------------------------------------------------------- function pointers

KEYWORDS = {"if", "while", "for", "switch", "return", "sizeof", "do", "else", "case", "__attribute__",
            "defined", "_Alignof", "__alignof__", "typeof", "__typeof__"}
IDENT = re.compile(r"[A-Za-z_]\w*")


def strip_c(text):
    """The text with comments, string and character literals and preprocessor
    lines blanked (lengths kept, so offsets stay valid)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c if j - i >= 2 else c)
            i = j
        elif c == "#" and (i == 0 or text[i - 1] == "\n"):
            j = i
            while True:
                k = text.find("\n", j)
                if k < 0:
                    k = n
                    break
                if text[k - 1] != "\\":
                    break
                j = k + 1
            out.append(re.sub(r"[^\n]", " ", text[i:k]))
            i = k
        else:
            out.append(c)
            i += 1
    return "".join(out)


def split_top(body):
    """Top-level pieces of body split at sep characters outside brackets."""
    parts, depth, cur = [], 0, []
    for ch in body:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch in ",;" and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def struct_fields(texts):
    """Field names in order of every struct of the library, by tag and typedef name."""
    fields = {}
    for text in texts:
        for m in re.finditer(r"\bstruct\s*(\w*)\s*\{", text):
            depth, i = 1, m.end()
            while i < len(text) and depth:
                depth += {"{": 1, "}": -1}.get(text[i], 0)
                i += 1
            body = text[m.end():i - 1]
            names = []
            for decl in body.split(";"):
                decl = re.sub(r"\{[^{}]*\}", "", decl)
                fp = re.search(r"\(\s*\*\s*(\w+)\s*\)\s*\(", decl)
                if fp:
                    names.append(fp.group(1))
                    continue
                for part in decl.split(","):
                    part = re.sub(r"\[[^]]*\]|:\s*\d+", "", part).strip()
                    ids = IDENT.findall(part)
                    if ids:
                        names.append(ids[-1])
            after = re.match(r"\s*(\w+)\s*;", text[i:])
            for key in (m.group(1), after.group(1) if after else None):
                if key:
                    fields.setdefault(key, names)
    return fields


def pointer_edges(files, texts):
    """{(caller file, callee file): {function names}} for calls through
    registered function pointers between the files of one library."""
    defs = collections.defaultdict(set)  # function name -> files defining it
    fdef = re.compile(r"^[A-Za-z_][\w \t\*]*?\b(\w+)\s*\([^;{}]*\)\s*(?:__attribute__\s*\(\(.*?\)\)\s*)?\{",
                      re.M | re.S)
    for f, t in texts.items():
        for m in fdef.finditer(t):
            if m.group(1) not in KEYWORDS:
                defs[m.group(1)].add(f)
    fields = struct_fields(texts.values())
    # files calling through a field of that name: `x->name(`, `x.name(`
    field_callers = collections.defaultdict(set)
    for f, t in texts.items():
        for m in re.finditer(r"(?:->|\.)\s*(\w+)\s*\)?\s*\(", t):
            field_callers[m.group(1)].add(f)

    def def_of(name, here):
        d = defs.get(name, set())
        return {here} if here in d else d

    edges = collections.defaultdict(set)
    # A registered value: a function, or a table variable holding functions.
    for f, t in texts.items():
        if f not in files:
            continue
        # the functions f can name: its own, and those its object file uses
        visible = {n for n, d in defs.items() if f in d} | (files[f][1] & set(defs))
        tables = collections.defaultdict(set)  # table variable -> functions in its initializer
        pending = [(m.group(0), m.start(), m.end(), {m.group(0)}) for m in IDENT.finditer(t)
                   if m.group(0) in visible and not re.match(r"\s*\(", t[m.end():])]
        rounds = 0
        while pending and rounds < 3:
            rounds += 1
            nxt = []
            for name, start, end, funcs in pending:
                receivers, table = resolve(t, start, end, fields, field_callers, defs, def_of, f)
                for r in receivers:
                    for fn in funcs:
                        for d in def_of(fn, f):
                            if r != d:
                                edges[(r, d)].add(fn)
                if table:
                    tables[table] |= funcs
            for table, funcs in tables.items():
                for m in re.finditer(r"\b%s\b" % re.escape(table), t):
                    if not re.match(r"\s*[\[=]", t[m.end():]) or re.match(r"\s*\[\s*\]\s*=", t[m.end():]):
                        if not re.match(r"\s*\[\s*\]\s*=|\s*=", t[m.end():]):
                            nxt.append((table, m.start(), m.end(), funcs))
            pending, tables = nxt, collections.defaultdict(set)
    return edges


def resolve(t, start, end, fields, field_callers, defs, def_of, here):
    """Where a function's address at t[start:end] goes: (files that will call
    it, name of the table variable it initialises or None)."""
    before = t[:start]
    m = re.search(r"(?:->|\.)\s*(\w+)\s*=\s*$", before)  # x->field = F, .field = F
    if m:
        return field_callers.get(m.group(1), set()), None
    depth, i, index = 0, start - 1, 0
    while i >= 0:  # the innermost open bracket around F
        ch = t[i]
        if ch in ")]}":
            depth += 1
        elif ch in "([{":
            if depth == 0:
                break
            depth -= 1
        elif ch == "," and depth == 0:
            index += 1
        elif ch == ";" and depth == 0:
            return set(), None
        i -= 1
    if i < 0:
        return set(), None
    if t[i] == "(":
        g = re.search(r"(\w+)\s*$", t[:i])
        if g and g.group(1) not in KEYWORDS and g.group(1) in defs:
            return def_of(g.group(1), here), None
        return set(), None
    if t[i] != "{":
        return set(), None
    # an initializer: whose element type, and which field?
    decl = re.search(r"(\w+)\s+\**\s*(\w+)\s*(\[[^]]*\])?\s*=\s*$", t[:i])
    outer = None
    if not decl and re.search(r"[,{]\s*$", t[:i]):  # an element of an array of structs
        j, d = i - 1, 0
        while j >= 0:
            if t[j] in ")]}":
                d += 1
            elif t[j] in "([{":
                if d == 0:
                    break
                d -= 1
            j -= 1
        if j >= 0 and t[j] == "{":
            outer = re.search(r"(\w+)\s+\**\s*(\w+)\s*\[[^]]*\]\s*=\s*$", t[:j])
    target = decl or outer
    if not target:
        return set(), None
    type_name, var = target.group(1), target.group(2)
    names = fields.get(type_name, [])
    elem = t[i + 1:end]
    des = re.search(r"\.\s*(\w+)\s*=\s*\w+$", elem)
    field = des.group(1) if des else (names[index] if index < len(names) else None)
    receivers = set(field_callers.get(field, set())) if field else set()
    return receivers, var


argv = sys.argv[1:]
if "--source" in argv:  # another source tree (tests/cli/layers.sh)
    i = argv.index("--source")
    root = os.path.abspath(argv[i + 1])
    del argv[i:i + 2]
args = [a for a in argv if not a.startswith("--")]
strict = "--strict" in argv
build = args[0] if args else "build"


def show(lib, comp, graph, files, via, what):
    print(f"{lib}: {what} among {', '.join(comp)}")
    for a in comp:
        for b in comp:
            if b in graph[a]:
                shared = sorted(files[a][1] & files[b][0]) + sorted("*" + n for n in via.get((a, b), ()))
                print(f"    {a} -> {b}: {', '.join(shared[:5])}{' ...' if len(shared) > 5 else ''}")


found = through = 0
for lib in LIBS:
    target = TARGET.get(lib, f"coderag_{lib}")
    objs = glob.glob(f"{build}/CMakeFiles/{target}.dir/**/*.o", recursive=True)
    objdir = f"{build}/CMakeFiles/{target}.dir"
    # objects of sources that still exist (an incremental build keeps stale ones)
    files = {os.path.relpath(o, objdir)[:-4]: symbols(o) for o in objs
             if os.path.exists(os.path.join(root, os.path.relpath(o, objdir)[:-2]))}
    graph = collections.defaultdict(set)
    for a, (_, used) in files.items():
        graph[a]
        for b, (defined, _) in files.items():
            if a != b and used & defined:
                graph[a].add(b)
    texts = {}
    for f in files:
        src = os.path.join(root, f + ".c")
        if not os.path.exists(src):
            continue
        with open(src, encoding="utf-8", errors="replace") as fh:
            texts[f] = strip_c(fh.read())
    for h in glob.glob(os.path.join(root, lib, "**", "*.h"), recursive=True):
        with open(h, encoding="utf-8", errors="replace") as fh:
            texts.setdefault(os.path.relpath(h, root) + "#h", strip_c(fh.read()))
    via = pointer_edges(files, texts)
    full = collections.defaultdict(set, {a: set(b) for a, b in graph.items()})
    for (a, b), names in via.items():
        if a in files and b in files:
            full[a].add(b)
    if "--edges" in argv:
        for (a, b), names in sorted(via.items()):
            if a in files and b in files:
                print(f"{lib}: {a} -> {b} through pointers: {', '.join(sorted(names))}")
    direct = groups(graph)
    for comp in direct:
        found += 1
        show(lib, comp, graph, files, {}, "cycle")
    # cycles that only calls through registered function pointers close
    for comp in groups(full):
        if comp in direct:
            continue
        through += 1
        show(lib, comp, full, files, via, "cycle through function pointers")
print(f"{found} cycle(s); {through} more through function pointers (*name: a call through a pointer)")
sys.exit(1 if found or (strict and through) else 0)
