;;; coderag-lens.el --- Code lenses: callers, references, "Ask CodeRAG"  -*- lexical-binding: t; -*-

;; Part of coderag.el (see there).

;;; Commentary:

;; The server's code lenses shown as lines above the definitions they belong
;; to: counts in grey, "Ask CodeRAG" and "Explain" as links that stream their
;; answer into *coderag* (C-c ' l runs this line's).

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'coderag-connection)
(require 'coderag-ask)

(defvar coderag-mode)
(defvar coderag--change-timer)
(declare-function coderag--send-change "coderag" (buf))

(defvar-local coderag--lens-overlays nil)

(defun coderag--run-lens (cmd)
  "Run lens command CMD (coderag.ask or coderag.explain) with streaming."
  (display-buffer (coderag--run-command (coderag-connection) cmd)))

(defun coderag--lens-text (lens)
  "The text of LENS: a clickable title for commands, grey for counts."
  (let* ((cmd (plist-get lens :command)) (title (or (plist-get cmd :title) "")))
    (if (member (plist-get cmd :command) '("coderag.ask" "coderag.explain"))
        (propertize title 'face 'link 'mouse-face 'highlight 'help-echo "mouse-1: run; C-c ' l runs this line's"
                    'keymap (let ((m (make-sparse-keymap)))
                              (define-key m [mouse-1] (lambda () (interactive) (coderag--run-lens cmd)))
                              m))
      (propertize title 'face 'shadow))))

(defun coderag--show-lenses (lenses)
  "Show LENSES as lines above the lines they belong to."
  (mapc #'delete-overlay coderag--lens-overlays)
  (setq coderag--lens-overlays nil)
  (let ((by-line (make-hash-table)))
    (mapc (lambda (l) (push l (gethash (plist-get (plist-get (plist-get l :range) :start) :line) by-line)))
          lenses)
    (save-excursion
      (maphash (lambda (line ls)
                 (goto-char (point-min))
                 (forward-line line)
                 (let ((ov (make-overlay (point) (point))))
                   (overlay-put ov 'before-string
                                (concat (make-string (current-indentation) ?\s)
                                        (mapconcat #'coderag--lens-text (reverse ls) " | ") "\n"))
                   (overlay-put ov 'coderag-lenses (reverse ls))
                   (push ov coderag--lens-overlays)))
               by-line))))

(defun coderag-refresh-lenses (&optional callback)
  "Ask the server for this buffer's code lenses and show them; then call CALLBACK."
  (interactive)
  (when (and buffer-file-name coderag-mode)
    (let ((buf (current-buffer)))
      ;; the lenses stand on the lines of the text the server has: send a pending edit first
      (when coderag--change-timer (coderag--send-change buf))
      (coderag--send (coderag-connection) :textDocument/codeLens (list :textDocument (coderag--doc-id))
                     (lambda (lenses)
                       (when (buffer-live-p buf)
                         (with-current-buffer buf (coderag--show-lenses (append lenses nil))))
                       (when callback (funcall callback lenses)))
                     #'ignore))))

(defun coderag-lens-run ()
  "Run the \"Ask CodeRAG\" (or explain) lens of the definition on this line."
  (interactive)
  (let ((cmd (cl-some (lambda (ov)
                        (and (= (line-number-at-pos (overlay-start ov)) (line-number-at-pos))
                             (cl-some (lambda (l) (let ((c (plist-get l :command)))
                                                    (and (member (plist-get c :command) '("coderag.ask" "coderag.explain")) c)))
                                      (overlay-get ov 'coderag-lenses))))
                      coderag--lens-overlays)))
    (unless cmd (user-error "No CodeRAG lens on this line"))
    (coderag--run-lens cmd)))

(provide 'coderag-lens)
;;; coderag-lens.el ends here
