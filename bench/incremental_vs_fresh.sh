#!/usr/bin/env bash
# An incremental update equals a fresh index, edge for edge, on a real project after 200
# files are deleted, renamed, emptied of an import, given a new definition or a renamed one.
#   incremental_vs_fresh.sh CODERAG_BIN CORPUS_DIR [TAG]
set -u
bin=$(realpath "$1"); corpus=$2; tag=${3:-run}
t=${TMPDIR:-/tmp}/coderag-incr-$tag
# A copy of the corpus's files ("$corpus/.": were CORPUS_DIR a symbolic link, `cp -R` would copy
# the link, and the edits below would land in the corpus itself).
rm -rf $t $t.inc $t.fresh; mkdir -p $t && cp -R "$corpus/." $t/ || exit 2
$bin index --root $t --index-dir $t.inc >/dev/null 2>&1
cd $t || exit 2
python3 - <<'PY'
import os,re,random
exts=('.py','.go','.js','.ts','.java','.c','.h','.cc','.cpp','.rs')
files=sorted(os.path.join(d,f) for d,_,fs in os.walk('.') if '.coderag' not in d for f in fs if f.endswith(exts))
random.seed(7)
pick=random.sample(files,min(200,len(files)//2))
for i,p in enumerate(pick):
    op=i%5
    s=open(p).read()
    if op==0: os.unlink(p); continue
    py=p.endswith('.py')
    if op==1: s=re.sub(r'^(\s*(?:def|func|function|class|fn|void|int|static \w+) )(\w+)', r'\1\2_renamed', s, count=1, flags=re.M)
    elif op==2: s+=('\n\ndef get_version(x):\n    return x\n' if py else '\n')
    elif op==3: s=re.sub(r'^(from|import|#include|use) .*\n', '', s, count=1, flags=re.M)
    else:
        base,ext=os.path.splitext(p); os.rename(p, base+'_moved'+ext); continue
    open(p,'w').write(s)
PY
cd /tmp
$bin index --root $t --index-dir $t.inc >/dev/null 2>&1
$bin index --root $t --index-dir $t.fresh >/dev/null 2>&1
python3 - $t <<'PY'
import sqlite3,sys
t=sys.argv[1]
def dump(db):
    c=sqlite3.connect(db)
    ch="f.path||':'||c.start_line||':'||c.win||':'||c.symbol"
    q=f"""SELECT fa.path||':'||a.start_line||':'||a.win||':'||a.symbol, fb.path||':'||b.start_line||':'||b.win||':'||b.symbol, e.kind FROM edges e
    JOIN chunks a ON a.id=e.src JOIN files fa ON fa.id=a.file_id JOIN chunks b ON b.id=e.dst JOIN files fb ON fb.id=b.file_id"""
    from collections import Counter
    return Counter(c.execute(q).fetchall())
a=dump(t+'.inc/index.db'); b=dump(t+'.fresh/index.db')
print("edges incremental", sum(a.values()), "fresh", sum(b.values()), "only incremental", sum((a-b).values()), "only fresh", sum((b-a).values()))
for k in list((b-a))[:5]: print("  only fresh:", k)
for k in list((a-b))[:5]: print("  only incremental:", k)
PY
rm -rf "$t" "$t.inc" "$t.fresh"
