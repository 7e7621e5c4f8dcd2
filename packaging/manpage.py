#!/usr/bin/env python3
"""coderag(1) from the binary's own --help (and each command's): the page
never says what the program does not.

    manpage.py BUILD/coderag OUT.1
"""
import re
import subprocess
import sys

binary, out = sys.argv[1], sys.argv[2]


def run(*args):
    return subprocess.run([binary, *args], capture_output=True, text=True, check=True).stdout


def esc(line):
    line = line.replace('\\', '\\e').replace('-', '\\-')
    return ('\\&' + line) if line[:1] in '.\'' else line


top = run('--help')
version = run('--version').splitlines()[0].split()[1]
commands = []
for line in top.splitlines():
    m = re.match(r'^  ([a-z]+)\s+(.*)$', line)
    if m:
        commands.append((m.group(1), m.group(2)))

page = [
    f'.TH CODERAG 1 "" "coderag {version}" "User Commands"',
    '.SH NAME',
    'coderag \\- answers questions about a codebase with verified citations',
    '.SH SYNOPSIS',
    '.B coderag',
    '.I command',
    '[\\fB\\-\\-root\\fR \\fIDIR\\fR] [\\fIoptions\\fR]',
    '.SH DESCRIPTION',
    'The text below is what \\fBcoderag \\-\\-help\\fR and \\fBcoderag \\fIcommand\\fB \\-\\-help\\fR print.',
    '.SH COMMANDS',
]
for name, summary in commands:
    page += [f'.SS {name}', '.nf']
    page += [esc(l) for l in run(name, '--help').rstrip('\n').splitlines()]
    page += ['.fi']
page += [
    '.SH FILES',
    '.TP',
    '.I /usr/share/coderag/models/',
    'the builtin embedder\'s model (found beside the binary, then in ../share/coderag/models/)',
    '.TP',
    '.I /usr/share/coderag/nvim/, /usr/share/emacs/site\\-lisp/coderag/',
    'the Neovim plugin and the Emacs package',
    '.TP',
    '.I ROOT/.coderag/',
    'a workspace\'s index',
    '.SH VERSION',
    '.nf',
] + [esc(l) for l in run('--version').rstrip('\n').splitlines()] + ['.fi', '']
with open(out, 'w') as f:
    f.write('\n'.join(page))
