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
        (propertize title 'face 'link 'mouse-face 'highlight 'help-echo "mouse-1: run; C-c ' l chooses from the keyboard"
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

(defun coderag--lens-overlay-here ()
  "The lens overlay of the definition at point: the nearest at or above its line.
A definition's lenses stand on its first line (a decorator, a return type
on a line of its own), so its name's line and its body find them too."
  (let ((line (line-number-at-pos)) best best-line)
    (dolist (ov coderag--lens-overlays)
      (let ((l (line-number-at-pos (overlay-start ov))))
        (when (and (<= l line) (or (not best) (> l best-line)))
          (setq best ov best-line l))))
    best))

(defun coderag--lens-callers (line)
  "List the callers of the definition starting on LINE (1-based) in an xref buffer.
The lens names no definition: each word of the line is tried in turn
\(\"def\", \"static\", a return type...) until one names it."
  (let* ((conn (coderag-connection)) (doc (coderag--doc-id))
         (text (save-excursion (goto-char (point-min)) (forward-line (1- line))
                               (buffer-substring-no-properties (point) (line-end-position))))
         (cols (let ((i 0) out)
                 (while (string-match "[[:alpha:]_][[:alnum:]_]*" text i)
                   (push (match-beginning 0) out) (setq i (match-end 0)))
                 (nreverse out))))
    (cl-labels
        ((try (cols)
           (if (null cols) (message "coderag: no definition on this line")
             (coderag--send
              conn :textDocument/prepareCallHierarchy
              (list :textDocument doc :position (list :line (1- line) :character (car cols)))
              (lambda (items)
                (let ((item (and items (> (length items) 0) (aref items 0))))
                  (if (not item) (try (cdr cols))
                    (coderag--send
                     conn :callHierarchy/incomingCalls (list :item item)
                     (lambda (calls)
                       (let ((xs (mapcar (lambda (c)
                                           (let* ((from (plist-get c :from))
                                                  (at (plist-get (plist-get (plist-get from :selectionRange) :start) :line)))
                                             (xref-make (format "%s" (plist-get from :name))
                                                        (xref-make-file-location
                                                         (coderag--uri-to-path (plist-get from :uri)) (1+ at) 0))))
                                         (append calls nil))))
                         (if (null xs) (message "coderag: no callers")
                           (funcall xref-show-xrefs-function (lambda () xs)
                                    `((window . ,(selected-window)) (display-action . nil))))))
                     (lambda (&rest _) (message "coderag: callers could not be listed"))))))
              (lambda (&rest _) (try (cdr cols)))))))
      (try cols))))

(defun coderag--lens-action (lens)
  "What choosing LENS from the keyboard does (a function), or nil."
  (let* ((c (plist-get lens :command)) (cmd (plist-get c :command)) (title (or (plist-get c :title) ""))
         (line (1+ (plist-get (plist-get (plist-get lens :range) :start) :line))))
    (cond ((member cmd '("coderag.ask" "coderag.explain")) (lambda () (coderag--run-lens c)))
          ((string-prefix-p "cited for: " title)
           (lambda () (if coderag-last-result
                          (display-buffer (coderag-show-answer coderag-last-question coderag-last-result
                                                               coderag-last-root))
                        (user-error "No answer yet"))))
          ((string-match-p "\\`[0-9]+ caller" title) (lambda () (coderag--lens-callers line))))))

(defun coderag-lens-run ()
  "Run a CodeRAG lens of the definition at point, from the keyboard (C-c \\=' l).
The lenses are those above the definition point is in (its first line,
its name's line or its body): \"Ask CodeRAG\" runs at once when it is the
only lens that does something; otherwise the choices are listed (\"Ask
CodeRAG\", \"3 callers, 5 references\" -- which lists the callers --, a
\"cited for\" lens, which reopens the answer) with the first as default."
  (interactive)
  (let* ((ov (coderag--lens-overlay-here))
         (choices (cl-loop for l in (and ov (overlay-get ov 'coderag-lenses))
                           for a = (coderag--lens-action l)
                           when a collect (cons (plist-get (plist-get l :command) :title) a))))
    (unless choices
      (user-error "No CodeRAG lens here: lenses stand above definitions (M-x coderag-refresh-lenses)"))
    ;; "Ask CodeRAG" first: the default
    (setq choices (append (cl-remove-if-not (lambda (c) (equal (car c) "Ask CodeRAG")) choices)
                          (cl-remove-if (lambda (c) (equal (car c) "Ask CodeRAG")) choices)))
    (funcall (cdr (if (= (length choices) 1) (car choices)
                    (assoc (coderag--read-choice "CodeRAG lens" choices) choices))))))

(provide 'coderag-lens)
;;; coderag-lens.el ends here
