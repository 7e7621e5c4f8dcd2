"""Fetches the re-ranker's training packages (ranker-packages.txt) into
WORK/src/NAME: Debian packages downloaded and unpacked (never installed),
Debian source packages' upstream tarballs, npm tarballs packed; only the files the index reads, refusing evaluation
corpora and vendored copies (excluded.py). Their README and manual pages go
to WORK/docs/NAME (mine_multi.py's sections). Prints what it used and refused.

    fetch_ranker.py PACKAGES_TXT WORK
"""
import os
import shutil
import subprocess
import sys
import tarfile

from excluded import package_excluded, path_excluded
from mine_multi import doc_files

SOURCE_EXTS = {".py", ".go", ".rs", ".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".java",
               ".js", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"}


def run(cmd, cwd):
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL)


def src_apt(work):
    """apt options reading Debian's source lists from a folder of work (as
    bench/corpus.sh does), fetched once: the system's lists stay as they are."""
    apt = os.path.join(work, "apt")
    opts = ["-o", "Dir::Etc::SourceList=%s/deb-src.sources" % apt,
            "-o", "Dir::Etc::SourceParts=%s/parts" % apt, "-o", "Dir::State::Lists=%s/lists" % apt,
            "-o", "Dir::Cache=%s/cache" % apt, "-o", "APT::Sandbox::User=root"]
    if not os.path.isdir(os.path.join(apt, "lists")):
        for d in ("parts", "lists/partial", "cache"):
            os.makedirs(os.path.join(apt, d), exist_ok=True)
        uri = "http://deb.debian.org/debian"
        for f in sorted(os.listdir("/etc/apt/sources.list.d")):
            if f.endswith(".sources"):
                for line in open(os.path.join("/etc/apt/sources.list.d", f)):
                    if line.startswith("URIs:"):
                        uri = line.split()[1]
                        break
                break
        with open(os.path.join(apt, "deb-src.sources"), "w") as w:
            w.write("Types: deb-src\nURIs: %s\nSuites: bookworm\nComponents: main\n"
                    "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n" % uri)
        run(["apt-get"] + opts + ["update", "-qq"], work)
    return opts


def fetch(kind, spec, dl, work):
    os.makedirs(dl, exist_ok=True)
    unpacked = os.path.join(dl, "x")
    if os.path.isdir(unpacked):
        return unpacked
    if kind == "deb":
        run(["apt-get", "download", "-qq", "-o", "APT::Sandbox::User=root", spec], dl)
        deb = [f for f in os.listdir(dl) if f.endswith(".deb")][0]
        run(["dpkg-deb", "-x", deb, "x"], dl)
    elif kind == "src":
        # only the upstream tarball is needed: a missing debian/ part is no failure
        subprocess.run(["apt-get"] + src_apt(work) + ["source", "--download-only", "-qq", spec],
                       cwd=dl, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        origs = sorted(f for f in os.listdir(dl) if ".orig.tar." in f)
        if not origs:
            raise SystemExit("cannot fetch the source of %s" % spec)
        orig = origs[0]
        os.makedirs(unpacked)
        run(["tar", "-xf", orig, "-C", "x", "--strip-components=1"], dl)
    elif kind == "npm":
        run(["npm", "pack", spec, "--silent"], dl)
        tgz = [f for f in os.listdir(dl) if f.endswith(".tgz")][0]
        with tarfile.open(os.path.join(dl, tgz)) as t:
            t.extractall(unpacked, filter="data") if hasattr(tarfile, "data_filter") \
                else t.extractall(unpacked)
        unpacked = os.path.join(unpacked, "package")
        os.rename(unpacked, unpacked + ".tmp")
        shutil.move(unpacked + ".tmp", os.path.join(dl, "y"))
        shutil.rmtree(os.path.join(dl, "x"))
        shutil.move(os.path.join(dl, "y"), os.path.join(dl, "x"))
        unpacked = os.path.join(dl, "x")
    else:
        raise SystemExit("unknown kind %s" % kind)
    return unpacked


def copy_docs(unpacked, out):
    """The package's README and manual pages (mine_multi.py's section
    miner reads them), wherever the package keeps them; returns how many."""
    if os.path.isdir(out):
        shutil.rmtree(out)
    n = 0
    for f in doc_files(unpacked):
        rel = os.path.relpath(f, unpacked)
        if path_excluded(rel) or "/testdata/" in "/" + rel or "/test/" in "/" + rel:
            continue
        os.makedirs(os.path.dirname(os.path.join(out, rel)), exist_ok=True)
        shutil.copyfile(f, os.path.join(out, rel))
        n += 1
    return n


def main():
    packages, work = sys.argv[1], sys.argv[2]
    for line in open(packages):
        if line.startswith("#") or not line.strip():
            continue
        name, kind, spec, path = line.split()
        why = package_excluded(spec)
        if why:
            print("refused %s: %s" % (name, why))
            continue
        unpacked = fetch(kind, spec, os.path.join(work, "dl", name), work)
        src = os.path.join(unpacked, path)
        out = os.path.join(work, "src", name)
        if os.path.isdir(out):
            shutil.rmtree(out)
        n = refused = 0
        for d, _, files in os.walk(src):
            for f in sorted(files):
                if os.path.splitext(f)[1] not in SOURCE_EXTS:
                    continue
                rel = os.path.relpath(os.path.join(d, f), src)
                if path_excluded(rel):
                    refused += 1
                    continue
                os.makedirs(os.path.dirname(os.path.join(out, rel)), exist_ok=True)
                shutil.copyfile(os.path.join(d, f), os.path.join(out, rel))
                n += 1
        docs = copy_docs(unpacked, os.path.join(work, "docs", name))
        print("%s %s: %d files (%d refused), %d doc files" % (name, spec, n, refused, docs),
              flush=True)


if __name__ == "__main__":
    main()
