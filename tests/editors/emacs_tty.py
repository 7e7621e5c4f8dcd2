#!/usr/bin/env python3
"""Emacs 28 on a terminal (issue 38): the *coderag* buffer's long lines wrap between words,
never inside an identifier. Batch Emacs does no redisplay, so this runs `emacs -nw` on a
pseudo-terminal 70 columns wide; the Lisp below shows an answer, redisplays, walks the
screen lines with `vertical-motion' and writes what it found to a file, then exits.

    emacs_tty.py EDITORS_EMACS_DIR

Prints "emacs tty: N passed, N failed"; exits non-zero on failure.
"""
import fcntl
import json
import os
import pty
import select
import shutil
import struct
import sys
import tempfile
import termios

LISP = r"""
(add-hook 'window-setup-hook
 (lambda ()
   (let ((out (getenv "CT_OUT")))
     (condition-case err
         (let* ((words (mapconcat #'identity (make-list 12 "yaml_parser_fetch_more_tokens") " "))
                (buf (coderag-show-answer "Where?" (list :answer (concat "It calls " words ".")
                                                         :mode "extractive" :citations []))))
           (switch-to-buffer buf)
           (delete-other-windows)
           (redisplay t)
           (goto-char (point-min))
           (search-forward "It calls")
           (beginning-of-line)
           (let ((end (line-end-position)) (ww word-wrap) cuts rows)
             (while (and (< (point) end) (= (vertical-motion 1) 1) (< (point) end))
               (setq rows (1+ (or rows 0)))
               ;; a row that starts inside a word: the previous one broke it
               (when (and (> (point) (line-beginning-position))
                          (string-match-p "[[:alnum:]_]" (string (char-before)))
                          (string-match-p "[[:alnum:]_]" (string (char-after))))
                 (push (buffer-substring (- (point) 5) (+ (point) 5)) cuts)))
             (with-temp-file out
               (insert (json-encode (list :width (window-width) :rows (or rows 0)
                                          :cuts (vconcat cuts) :wordwrap (if ww t :json-false)))))))
       (error (with-temp-file out (insert (json-encode (list :error (format "%S" err))))))))
   (kill-emacs 0)))
"""


def main():
    lisp_dir = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="coderag-emacs-tty-")
    passed = failed = 0
    try:
        init = os.path.join(tmp, "init.el")
        out = os.path.join(tmp, "out.json")
        with open(init, "w") as f:
            f.write("(require 'json)\n(require 'coderag)\n" + LISP)
        pid, fd = pty.fork()
        if pid == 0:
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 70, 0, 0))
            os.environ.update({"TERM": "xterm", "HOME": tmp, "CT_OUT": out})
            os.execvp("emacs", ["emacs", "-nw", "-Q", "-L", lisp_dir, "-l", init])
        while True:  # the terminal's output, until Emacs exits (the bound: a hang)
            r, _, _ = select.select([fd], [], [], 600)
            if not r:
                os.kill(pid, 9)
                break
            try:
                if not os.read(fd, 65536):
                    break
            except OSError:
                break
        os.waitpid(pid, 0)
        try:
            res = json.load(open(out))
        except (OSError, ValueError) as e:
            res = {"error": str(e)}
        checks = [
            ("error" not in res, "Emacs -nw showed the answer", res.get("error")),
            (res.get("wordwrap") is True, "*coderag* wraps at word boundaries (word-wrap)", res),
            (res.get("rows", 0) >= 4 and res.get("width") == 70, "the long line takes several rows of 70", res),
            (res.get("cuts") == [], "no identifier broken across rows", res.get("cuts")),
        ]
        for ok, what, detail in checks:
            if ok:
                passed += 1
                print("ok   " + what)
            else:
                failed += 1
                print("FAIL %s: %r" % (what, detail))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("emacs tty: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
