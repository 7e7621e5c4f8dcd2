#!/usr/bin/env python3
"""`coderag ask` as a person at a terminal sees it (issue 24), under a
pseudo-terminal, with tests/fake_openai.py as the LLM:

    ask_tty.py CODERAG_BIN FIXTURE_DIR

- the LLM's first piece of text is on the screen while the fake LLM holds
  the rest of its stream (released only once the test has seen it: no
  timing involved); progress went to the terminal before it and was cleared;
- no Markdown syntax on screen; the verified citations follow as path:line
  from the current folder with their symbols, then the rejected ones;
- interrupted (SIGINT) in the middle of a bold piece, the terminal is reset;
- NO_COLOR and TERM=dumb: no escape sequence at all;
- piped, the output is the answer's text as before (what --json reports as
  "answer", ended by a newline), with nothing on stderr but logs;
- extractive (issue 36): a lead, numbered code lines, the rest folded, no
  citations block (with --all: every location, then the citations).
"""
import fcntl
import json
import os
import pty
import re
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import termios
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lsp"))
from lsp_client import TIMEOUT, fake_llm  # noqa: E402

BIN, FIXTURES = sys.argv[1], sys.argv[2]
QUESTION = "How is tax applied to an order?"
# {ctx0} is the first context block (shop/models.py's apply_tax for this question)
ANSWER = ("Tax is applied by **`apply_tax`** [{ctx0}], as `Order.total` shows.\n\n"
          "## Also\n- a bad one [shop/nowhere.py:1-2]\n")
FIRST = "Tax is "  # the first event's content (chunk 7)
FAILED = []


def check(cond, what):
    if not cond:
        FAILED.append(what)
        print("FAIL: " + what)


def control(port, what, body):
    req = urllib.request.Request("http://127.0.0.1:%d/_control/%s" % (port, what),
                                 data=json.dumps(body).encode(), method="POST")
    return json.load(urllib.request.urlopen(req, timeout=TIMEOUT))


class Tty:
    """The program on a pseudo-terminal (stdin, stdout and stderr)."""

    def __init__(self, args, cwd, env, cols=0):
        master, slave = pty.openpty()
        if cols:  # the terminal's width (0: none set)
            fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, cols, 0, 0))
        self.proc = subprocess.Popen(args, cwd=cwd, env=env, stdin=slave, stdout=slave, stderr=slave,
                                     close_fds=True)
        os.close(slave)
        self.fd = master
        self.screen = b""

    def read_until(self, needle):
        """Reads until needle is on the screen (True) or the program ends (False)."""
        while needle not in self.screen:
            r, _, _ = select.select([self.fd], [], [], TIMEOUT)
            if not r:
                return False
            try:
                d = os.read(self.fd, 65536)
            except OSError:  # EIO: every writer closed the terminal
                return False
            if not d:
                return False
            self.screen += d
        return True

    def finish(self):
        self.read_until(b"\0never\0")
        os.close(self.fd)
        return self.proc.wait(timeout=TIMEOUT)


def environment(port, **extra):
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    env.update({"CODERAG_LLM_URL": "http://127.0.0.1:%d" % port, "TERM": "xterm-256color"})
    env.update(extra)
    return env


def sanitizers_quiet(text, what):
    check("AddressSanitizer" not in text and "runtime error" not in text, what + ": sanitizer report")


def visible(screen):
    """The screen's text without escape sequences (CSI and OSC)."""
    import re
    s = re.sub(rb"\x1b\][^\x1b\x07]*(\x1b\\|\x07)", b"", screen)
    return re.sub(rb"\x1b\[[0-9;]*[A-Za-z]", b"", s).decode("utf-8", "replace")


def t_streamed(root, sub):
    script = {"actions": {"chat": [{"content": ANSWER, "chunk": 7, "hold_after": "rest"}]}}
    with fake_llm(script) as port:
        t = Tty([BIN, "ask", QUESTION], sub, environment(port))
        seen = t.read_until(FIRST.encode())
        check(seen, "the first token on screen while the LLM holds the rest: %r" % t.screen)
        before = visible(t.screen)
        check("updating the index" in before and "asking the LLM" in before,
              "progress shown before the answer: %r" % before)
        control(port, "release", {"name": "rest"})
        code = t.finish()
    screen = t.screen.decode("utf-8", "replace")
    text = visible(t.screen)
    sanitizers_quiet(screen, "streamed")
    check(code == 0, "exit status 0, got %d" % code)
    check("\x1b[" in screen and "\x1b]8;;file://" in screen, "styles and file links on a terminal")
    check("**" not in text and "`" not in text and "## " not in text,
          "no Markdown syntax on screen: %r" % text)
    check("Tax is applied by apply_tax " in text, "the answer's text: %r" % text)
    # the progress line is cleared before the answer: blanks then a carriage return
    head = text[:text.index("Tax is ")]
    check(head.endswith("\r"), "the progress line cleared before the answer: %r" % head)
    lines = [l.strip() for l in text.replace("\r", "").split("\n")]
    check("Citations" in lines, "a citations heading: %r" % lines)
    cites = lines[lines.index("Citations") + 1:] if "Citations" in lines else []
    # run from shop/ (a subfolder of the root): paths as seen from there
    check(bool(cites) and cites[0].split() == ["models.py:39", "apply_tax"],
          "verified citation as path:line from the current folder, with its symbol: %r" % cites)
    check("Rejected citations" in lines and "[shop/nowhere.py:1-2]  (file-not-found)" in lines,
          "rejected citation with its reason: %r" % lines)
    check(text.index("Tax is") < text.index("Citations"), "citations after the answer")


def t_rejected_styled(root, sub):
    """Issue 38: a streamed citation is checked as it completes, as verification will check
    it: a rejected one is struck out, not linked, and says why (NO_COLOR too); a verified one
    stays a link; a bracket that names no file ("[x:1]") stays text."""
    answer = ("Verified [{ctx0}]; gone [shop/nowhere.py:1-2]; mixed [{ctx0.path}:{ctx0.start}; "
              "shop/models.py:9000]; see [the code](shop/gone.py#L3); prose [x:1].\n")
    script = {"actions": {"chat": [{"content": answer, "chunk": 7, "times": 2}]}}
    with fake_llm(script) as port:
        t = Tty([BIN, "ask", QUESTION], sub, environment(port))
        code = t.finish()
        plain = Tty([BIN, "ask", QUESTION], sub, environment(port, NO_COLOR="1"))
        plain_code = plain.finish()
    screen = t.screen.decode("utf-8", "replace")
    sanitizers_quiet(screen, "rejected styled")
    check(code == 0 and plain_code == 0, "rejected styled: exit status 0, got %d, %d" % (code, plain_code))
    text = visible(t.screen).replace("\r", "")
    line = next((l for l in text.split("\n") if "Verified" in l), "")
    check("gone shop/nowhere.py:1-2 (rejected: file-not-found);" in line,
          "a rejected citation says so where it stands: %r" % line)
    check("shop/models.py:9000 (rejected: out-of-range)" in line,
          "one part of a bracket rejected, the other kept: %r" % line)
    check("see the code (shop/gone.py#L3, rejected: file-not-found);" in line,
          "a rejected link target says so: %r" % line)
    check("prose [x:1]." in line, "a bracket naming no file stays text: %r" % line)
    # the rejected part: struck out in red, never blue and underlined, never a link
    gone = screen.find("shop/nowhere.py:1-2")
    check(gone > 0 and screen.rfind("\x1b[9;31m", 0, gone) > screen.rfind("\x1b[0m", 0, gone) - 1 and
          screen.rfind("\x1b[4;34m", 0, gone) < screen.rfind("\x1b[0m", 0, gone),
          "rejected: struck out, not styled as a citation: %r" % screen[max(0, gone - 40):gone + 20])
    check("nowhere.py" not in "".join(re.findall(r"\x1b\]8;;([^\x1b]*)", screen)) and
          "gone.py" not in "".join(re.findall(r"\x1b\]8;;([^\x1b]*)", screen)),
          "rejected: no link to the missing files")
    check(screen.count("\x1b]8;;file://") >= 3, "verified citations stay links: %r" % screen)
    ptext = plain.screen.decode("utf-8", "replace")
    check("\x1b" not in ptext and "gone shop/nowhere.py:1-2 (rejected: file-not-found);" in ptext,
          "NO_COLOR: the rejection said in words: %r" % ptext)


def t_code_span(tmp):
    """Issue 38: a doc comment's code span on the terminal as written, no backslash in it."""
    proj = os.path.join(tmp, "spans")
    os.makedirs(proj)
    with open(os.path.join(proj, "tables.py"), "w") as f:
        f.write('def parse_array_header(line):\n'
                '    """Reads a `[[array header]]` line into the table path it names."""\n'
                '    return line.strip("[]").split(".")\n')
    env = dict(os.environ, TERM="xterm-256color", CODERAG_EMBED_PROVIDER="none")
    env.pop("NO_COLOR", None)
    env.pop("CODERAG_LLM_URL", None)
    t = Tty([BIN, "ask", "--mode", "extractive", "How is an array header line read?"], proj, env)
    code = t.finish()
    text = visible(t.screen)
    check(code == 0 and "Reads a [[array header]] line" in text and "\\[" not in text,
          "code span on the terminal as written: %r" % text[:400])


def t_interrupt(root, sub):
    """Ctrl-C while a style is on leaves the terminal plain."""
    script = {"actions": {"chat": [{"content": "**Tax is** applied.", "chunk": 7, "hold_after": "never"}]}}
    with fake_llm(script) as port:
        t = Tty([BIN, "ask", QUESTION], sub, environment(port))
        seen = t.read_until(b"Tax i")
        check(seen, "the first bold piece on screen: %r" % t.screen)
        bold = t.screen.rfind(b"\x1b[1m")
        check(bold >= 0 and b"\x1b[0m" not in t.screen[bold:], "bold is on: %r" % t.screen)
        t.proc.send_signal(2)  # SIGINT
        code = t.finish()
    check(code == -2, "ended by SIGINT, got %r" % code)
    bold = t.screen.rfind(b"\x1b[1m")
    check(b"\x1b[0m" in t.screen[bold:] and t.screen.endswith(b"\x1b]8;;\x1b\\\r\n"),
          "styles reset when interrupted: %r" % t.screen[-40:])


def t_plain(root, sub, extra, what):
    script = {"actions": {"chat": [{"content": ANSWER}]}}
    with fake_llm(script) as port:
        t = Tty([BIN, "ask", QUESTION], sub, environment(port, **extra))
        code = t.finish()
    screen = t.screen.decode("utf-8", "replace")
    sanitizers_quiet(screen, what)
    check(code == 0, what + ": exit status 0")
    check("\x1b" not in screen, what + ": no escape sequence: %r" % screen)
    check("**" not in screen and "`" not in screen, what + ": no Markdown: %r" % screen)
    check("models.py:39  apply_tax" in screen, what + ": citations listed: %r" % screen)


def t_extractive(root, sub):
    """Without an LLM (issue 36): the answer quotes its definitions as numbered code lines and
    cites each location once, so no citations block follows it; --all lists every context
    location and the citations."""
    env = dict(os.environ, TERM="xterm-256color")
    env.pop("NO_COLOR", None)
    env.pop("CODERAG_LLM_URL", None)
    t = Tty([BIN, "ask", "--mode", "extractive", QUESTION], sub, env)
    code = t.finish()
    text = visible(t.screen).replace("\r", "")
    sanitizers_quiet(text, "extractive")
    lines = [l.strip() for l in text.split("\n")]
    check(code == 0, "extractive: exit status 0, got %d" % code)
    lead = text.find("The best match is ")
    check(0 <= lead < text.find("39 \u2502"), "extractive: a lead first: %r" % text[:300])
    check("39 \u2502 def apply_tax(amount):" in text, "extractive: apply_tax quoted, numbered: %r" % text)
    check("```" not in text and "**" not in text, "extractive: code blocks rendered: %r" % text)
    check("Citations" not in lines, "extractive: no repeated citations block: %r" % lines)
    check("Also relevant:" in lines, "extractive: the rest folded: %r" % lines)
    t = Tty([BIN, "ask", "--mode", "extractive", "--all", QUESTION], sub, env)
    code = t.finish()
    every = visible(t.screen).replace("\r", "")
    lines = [l.strip() for l in every.split("\n")]
    check(code == 0 and "Citations" in lines and "more in the context list" not in every,
          "extractive --all: every location, then the citations: %r" % lines)
    # on a narrow terminal the text wraps at word boundaries: every row fits, and the lead's
    # words are the same words
    t = Tty([BIN, "ask", "--mode", "extractive", QUESTION], sub, env, cols=40)
    code = t.finish()
    # a progress line cleared by "\r<blanks>\r": what follows the last \r of a row
    rows = [r.rsplit("\r", 1)[-1] for r in visible(t.screen).replace("\r\n", "\n").split("\n")]
    narrow = "\n".join(rows)
    prose = [r for r in rows if "\u2502" not in r]  # quoted code is not wrapped
    check(code == 0 and all(len(r) <= 40 for r in prose),
          "narrow terminal: prose rows within 40 columns: %r" % rows)
    wide_lead = text[lead:text.find("\n\n", lead)].split()
    narrow_lead = narrow[narrow.find("The best match is "):].split("\n\n")[0].split()
    check(wide_lead and wide_lead == narrow_lead, "narrow terminal: the lead's words unbroken: %r / %r"
          % (wide_lead, narrow_lead))


def t_piped(root, sub):
    script = {"actions": {"chat": [{"content": ANSWER, "times": 2}]}}
    with fake_llm(script) as port:
        env = environment(port)
        piped = subprocess.run([BIN, "ask", QUESTION], cwd=sub, env=env, capture_output=True,
                               timeout=TIMEOUT)
        js = subprocess.run([BIN, "ask", "--json", QUESTION], cwd=sub, env=env, capture_output=True,
                            timeout=TIMEOUT)
    check(piped.returncode == 0 and js.returncode == 0, "piped asks succeed")
    answer = json.loads(js.stdout)["answer"]
    want = answer if answer.endswith("\n") else answer + "\n"
    check(piped.stdout == want.encode(),
          "piped output is the answer as it was: %r vs %r" % (piped.stdout, answer))
    check(b"**" in piped.stdout and b"\x1b" not in piped.stdout, "piped: Markdown kept, no escapes")
    err = piped.stderr.decode("utf-8", "replace")
    check("\r" not in err and "asking the LLM" not in err, "piped: no progress line: %r" % err)
    check("citation removed: [shop/nowhere.py:1-2] (file-not-found)" in err,
          "piped: a removed citation is said on stderr: %r" % err)
    sanitizers_quiet(err + js.stderr.decode("utf-8", "replace"), "piped")


def main():
    tmp = tempfile.mkdtemp(prefix="coderag-ask-tty-")
    try:
        root = os.path.join(tmp, "shop")
        shutil.copytree(os.path.join(FIXTURES, "shop"), root)
        open(os.path.join(root, "pyproject.toml"), "w").close()  # the root rule's marker
        sub = os.path.join(root, "shop")
        t_streamed(root, sub)
        t_rejected_styled(root, sub)
        t_interrupt(root, sub)
        t_plain(root, sub, {"NO_COLOR": "1"}, "NO_COLOR")
        t_plain(root, sub, {"TERM": "dumb"}, "TERM=dumb")
        t_piped(root, sub)
        t_extractive(root, sub)
        t_code_span(tmp)
        check(not os.path.exists(os.path.join(sub, ".coderag")), "no second index in the subfolder")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%s: %d failure(s)" % (os.path.basename(__file__), len(FAILED)))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
