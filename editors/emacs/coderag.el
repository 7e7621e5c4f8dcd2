;;; coderag.el --- Ask questions about a codebase through coderag  -*- lexical-binding: t; -*-

;; Version: 0.2.0
;; Package-Requires: ((emacs "28.1") (jsonrpc "1.0.14"))
;; Keywords: tools, languages
;; URL: see the coderag repository, editors/emacs/

;;; Commentary:

;; A client of the coderag language server (`coderag lsp') that runs beside
;; whatever language server you use (eglot, lsp-mode, none): it starts its own
;; `coderag lsp' process per workspace root over jsonrpc.el and never touches
;; eglot's configuration.
;;
;;   (require 'coderag)
;;   (add-hook 'prog-mode-hook #'coderag-mode)   ; or python-mode-hook, c-mode-hook...
;;
;; `coderag-mode' keeps the server informed of the buffer (unsaved edits
;; included), shows indexing and question progress in the mode line and adds
;; coderag's hover to eldoc (also under eglot, which resets eldoc's functions).
;; Its commands live under `coderag-keymap-prefix' (C-c ' by default, a prefix
;; left to minor modes): `coderag-ask' (C-c ' a) never blocks: the *coderag*
;; buffer opens at once, shows progress, streams the answer as the LLM writes
;; it (provisional), then the verified answer with buttons on its citations.
;; C-c ' k cancels.
;; `coderag-followup' asks with the last answers as history, `coderag-history'
;; reopens an earlier answer, `c' in the answer buffer shows the context used.
;;
;; The package is five files: this one (the minor mode, document sync and
;; hover), coderag-connection.el (the root rule, the server process,
;; progress), coderag-ask.el (questions and the answer buffer),
;; coderag-lens.el (code lenses) and coderag-render.el (markdown to faces
;; and buttons).  `(require 'coderag)' loads them all.

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'xref)
(require 'url-util)
(require 'subr-x)
(require 'eldoc)
(require 'coderag-render)
(require 'coderag-connection)
(require 'coderag-ask)
(require 'coderag-lens)

;;;; Hover through eldoc, document sync

(defvar-local coderag--version 0)
(defvar-local coderag--change-timer nil)

(defcustom coderag-change-delay 0.5
  "Idle seconds after an edit before the buffer's text is sent (didChange)."
  :group 'coderag
  :type 'number)

(defun coderag-eldoc-function (callback &rest _)
  "Eldoc: coderag's hover for the name at point, rendered, links as buttons."
  (when (and buffer-file-name (thing-at-point 'symbol))
    (let ((buf (current-buffer)))
      ;; the server reads the position in the text it has: send a pending edit first
      (when coderag--change-timer (coderag--send-change buf))
      (coderag--send (coderag-connection) :textDocument/hover
                     (list :textDocument (coderag--doc-id)
                           :position (list :line (1- (line-number-at-pos))
                                           :character (- (point) (line-beginning-position))))
                     (lambda (h)
                       (let ((v (plist-get (plist-get h :contents) :value)))
                         (when (and (stringp v) (buffer-live-p buf))
                           (funcall callback (coderag-render-string v) :thing "CodeRAG"))))
                     #'ignore))
    t))

;;;###autoload
(defun coderag-hover ()
  "Show coderag's hover for the name at point in a buffer whose links work."
  (interactive)
  (coderag-eldoc-function
   (lambda (doc &rest _)
     (with-current-buffer (get-buffer-create "*coderag hover*")
       (let ((inhibit-read-only t))
         (erase-buffer) (special-mode) (insert doc) (goto-char (point-min))))
     (display-buffer "*coderag hover*"))))

(defconst coderag-suffix-languages
  '(("py" . "python") ("c" . "c") ("h" . "c") ("cc" . "cpp") ("cpp" . "cpp") ("cxx" . "cpp")
    ("hpp" . "cpp") ("hh" . "cpp") ("hxx" . "cpp") ("go" . "go") ("rs" . "rust") ("java" . "java")
    ("js" . "javascript") ("jsx" . "javascriptreact") ("mjs" . "javascript") ("cjs" . "javascript")
    ("ts" . "typescript") ("mts" . "typescript") ("cts" . "typescript") ("tsx" . "typescriptreact"))
  "The code suffixes the coderag server reads, with their LSP language ids.")

(defun coderag--language-id ()
  "The LSP language id of this buffer, from its major mode (c-ts-mode -> \"c\").
In Fundamental mode (no major mode installed for the file), from its suffix."
  (let ((name (replace-regexp-in-string "\\(-ts\\)?-mode\\'" "" (symbol-name major-mode)))
        (by-suffix (and buffer-file-name
                        (cdr (assoc (file-name-extension buffer-file-name) coderag-suffix-languages)))))
    (if (and (eq major-mode 'fundamental-mode) by-suffix) by-suffix
      (pcase name
        ("c++" "cpp") ("js" "javascript") ("js2" "javascript") ("rjsx" "javascriptreact")
        ("tsx" "typescriptreact") (_ name)))))

(defcustom coderag-in-fundamental-mode t
  "Turn `coderag-mode' on in a file coderag reads that opens in Fundamental mode.
Stock Emacs 28 has no major mode for Go, Rust or TypeScript, so such a
file is in Fundamental mode, which no `prog-mode-hook' reaches; with this
on, `coderag-mode' runs there all the same (say nil to leave them alone).
A major mode (go-mode, rust-mode, typescript-mode: editors/emacs/README.md)
adds what Fundamental mode lacks."
  :group 'coderag
  :type 'boolean)

(defun coderag--maybe-fundamental ()
  "`find-file-hook': `coderag-mode' in a Fundamental-mode file coderag reads.
See `coderag-in-fundamental-mode'."
  (when (and coderag-in-fundamental-mode (eq major-mode 'fundamental-mode) buffer-file-name
             (not (bound-and-true-p coderag-mode))
             (assoc (file-name-extension buffer-file-name) coderag-suffix-languages))
    (message "coderag: no major mode for .%s files: coderag-mode on in Fundamental mode (a major mode: see coderag's README)"
             (file-name-extension buffer-file-name))
    (coderag-mode 1)))

(add-hook 'find-file-hook #'coderag--maybe-fundamental)

(defun coderag--did-open ()
  (jsonrpc-notify (coderag-connection) :textDocument/didOpen
                  (list :textDocument (list :uri (coderag--path-to-uri buffer-file-name)
                                            :languageId (coderag--language-id) :version coderag--version
                                            :text (save-restriction (widen) (buffer-substring-no-properties (point-min) (point-max)))))))

(defun coderag--send-change (buf)
  "Send BUF's whole text as a didChange now.
The debounce ended, or a question needs the text."
  (when (buffer-live-p buf)
    (with-current-buffer buf
      (when coderag--change-timer (cancel-timer coderag--change-timer))
      (setq coderag--change-timer nil coderag--version (1+ coderag--version))
      (ignore-errors
        (jsonrpc-notify (coderag-connection) :textDocument/didChange
                        (list :textDocument (list :uri (coderag--path-to-uri buffer-file-name)
                                                  :version coderag--version)
                              :contentChanges
                              (vector (list :text (save-restriction (widen) (buffer-substring-no-properties (point-min) (point-max)))))))))))

(defun coderag--did-change (&rest _)
  "Debounce the changes: one didChange after `coderag-change-delay' idle seconds."
  (when coderag--change-timer (cancel-timer coderag--change-timer))
  (setq coderag--change-timer
        (run-with-idle-timer coderag-change-delay nil #'coderag--send-change (current-buffer))))

(defun coderag-flush-changes ()
  "Send every buffer's pending (debounced) change now, so a question sees it."
  (dolist (b (buffer-list))
    (when (buffer-local-value 'coderag--change-timer b) (coderag--send-change b))))

(defun coderag--did-save ()
  (ignore-errors (jsonrpc-notify (coderag-connection) :textDocument/didSave (list :textDocument (coderag--doc-id))))
  (coderag-refresh-lenses))

(defun coderag--did-close ()
  (let ((conn (gethash (car (coderag-root)) coderag--connections)))
    (when (and conn (jsonrpc-running-p conn))
      (ignore-errors (jsonrpc-notify conn :textDocument/didClose (list :textDocument (coderag--doc-id)))))))

(defvar coderag-command-map
  (let ((map (make-sparse-keymap)))
    (define-key map "a" #'coderag-ask)
    (define-key map "f" #'coderag-followup)
    (define-key map "h" #'coderag-history)
    (define-key map "c" #'coderag-show-context)
    (define-key map "e" #'coderag-explain)
    (define-key map "." #'coderag-code-action)
    (define-key map "d" #'coderag-hover)
    (define-key map "s" #'coderag-status)
    (define-key map "l" #'coderag-lens-run)
    (define-key map "k" #'coderag-cancel)
    (define-key map "x" #'coderag-xref)
    (define-key map "r" #'coderag-reindex)
    map)
  "CodeRAG's commands, under `coderag-keymap-prefix' in `coderag-mode'.")
(fset 'coderag-command-map coderag-command-map)

(defvar coderag-mode-map (make-sparse-keymap)
  "Keymap of `coderag-mode': `coderag-command-map' under `coderag-keymap-prefix'.")

(defun coderag--set-prefix (sym value)
  "Setter of `coderag-keymap-prefix': move the command map to VALUE."
  (when (and (boundp sym) (symbol-value sym))
    (define-key coderag-mode-map (kbd (symbol-value sym)) nil))
  (set-default sym value)
  (when value (define-key coderag-mode-map (kbd value) 'coderag-command-map)))

(defcustom coderag-keymap-prefix "C-c '"
  "The prefix of CodeRAG's commands in `coderag-mode' (nil: none, bind your own).
C-c followed by a punctuation character is what Emacs leaves to minor
modes, so major modes' C-c C-<letter> keys (python-mode's C-c C-r) stay
theirs.  Set it with customize or `setopt' (or before loading coderag)."
  :group 'coderag
  :type '(choice (const :tag "none" nil) string)
  :set #'coderag--set-prefix)

(defvar coderag-mode)

(defun coderag--eglot-managed ()
  "Put coderag's hover back into eldoc (eglot replaces eldoc's functions)."
  (when (and coderag-mode (not (memq #'coderag-eldoc-function eldoc-documentation-functions)))
    (add-hook 'eldoc-documentation-functions #'coderag-eldoc-function t t)))

(add-hook 'eglot-managed-mode-hook #'coderag--eglot-managed)

;;;###autoload
(define-minor-mode coderag-mode
  "Use the coderag server in this buffer, beside any other language server."
  :lighter (:eval (coderag-mode-line))
  :keymap coderag-mode-map
  (cond
   ((not buffer-file-name) (setq coderag-mode nil))
   (coderag-mode
    (condition-case err
        (progn
          (coderag--did-open)
          (add-hook 'after-change-functions #'coderag--did-change nil t)
          (add-hook 'after-save-hook #'coderag--did-save nil t)
          (add-hook 'kill-buffer-hook #'coderag--did-close nil t)
          (add-hook 'eldoc-documentation-functions #'coderag-eldoc-function t t)
          (eldoc-mode 1)
          (coderag-refresh-lenses))
      (user-error (setq coderag-mode nil) (coderag--tell-once (error-message-string err)))))
   (t
    (coderag--did-close)
    (remove-hook 'after-change-functions #'coderag--did-change t)
    (remove-hook 'after-save-hook #'coderag--did-save t)
    (remove-hook 'kill-buffer-hook #'coderag--did-close t)
    (remove-hook 'eldoc-documentation-functions #'coderag-eldoc-function t)
    (mapc #'delete-overlay coderag--lens-overlays)
    (setq coderag--lens-overlays nil))))

(provide 'coderag)
;;; coderag.el ends here
