;;; coderag.el --- Ask questions about a Python codebase through coderag  -*- lexical-binding: t; -*-

;; Version: 0.2.0
;; Package-Requires: ((emacs "28.1") (jsonrpc "1.0.14"))
;; Keywords: tools, languages
;; URL: see the coderag repository, editors/emacs/

;;; Commentary:

;; A client of the coderag language server (`coderag lsp') that runs beside
;; whatever Python server you use (eglot with pyright or pylsp, lsp-mode, none):
;; it starts its own `coderag lsp' process per workspace root over jsonrpc.el and
;; never touches eglot's configuration.
;;
;;   (require 'coderag)
;;   (add-hook 'python-mode-hook #'coderag-mode)
;;
;; `coderag-mode' keeps the server informed of the buffer, shows indexing and
;; question progress in the mode line and adds coderag's hover to eldoc.
;; `coderag-ask' (C-c C-r a) never blocks: the *coderag* buffer opens at once,
;; shows progress, streams the answer as the LLM writes it (provisional), then
;; the verified answer with buttons on its citations.  C-c C-k cancels.
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

(defun coderag-eldoc-function (callback &rest _)
  "Eldoc: coderag's hover for the name at point, rendered, links as buttons."
  (when (and buffer-file-name (thing-at-point 'symbol))
    (let ((buf (current-buffer)))
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

(defun coderag--did-open ()
  (jsonrpc-notify (coderag-connection) :textDocument/didOpen
                  (list :textDocument (list :uri (coderag--path-to-uri buffer-file-name)
                                            :languageId "python" :version coderag--version
                                            :text (save-restriction (widen) (buffer-substring-no-properties (point-min) (point-max)))))))

(defun coderag--did-change (&rest _)
  (when coderag--change-timer (cancel-timer coderag--change-timer))
  (let ((buf (current-buffer)))
    (setq coderag--change-timer
          (run-with-idle-timer
           0.5 nil
           (lambda ()
             (when (buffer-live-p buf)
               (with-current-buffer buf
                 (setq coderag--change-timer nil coderag--version (1+ coderag--version))
                 (ignore-errors
                   (jsonrpc-notify (coderag-connection) :textDocument/didChange
                                   (list :textDocument (list :uri (coderag--path-to-uri buffer-file-name)
                                                             :version coderag--version)
                                         :contentChanges
                                         (vector (list :text (save-restriction (widen) (buffer-substring-no-properties (point-min) (point-max)))))))))))))))

(defun coderag--did-save ()
  (ignore-errors (jsonrpc-notify (coderag-connection) :textDocument/didSave (list :textDocument (coderag--doc-id))))
  (coderag-refresh-lenses))

(defun coderag--did-close ()
  (let ((conn (gethash (car (coderag-root)) coderag--connections)))
    (when (and conn (jsonrpc-running-p conn))
      (ignore-errors (jsonrpc-notify conn :textDocument/didClose (list :textDocument (coderag--doc-id)))))))

(defvar coderag-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c C-r a") #'coderag-ask)
    (define-key map (kbd "C-c C-r f") #'coderag-followup)
    (define-key map (kbd "C-c C-r h") #'coderag-history)
    (define-key map (kbd "C-c C-r c") #'coderag-show-context)
    (define-key map (kbd "C-c C-r e") #'coderag-explain)
    (define-key map (kbd "C-c C-r d") #'coderag-hover)
    (define-key map (kbd "C-c C-r s") #'coderag-status)
    (define-key map (kbd "C-c C-r l") #'coderag-lens-run)
    (define-key map (kbd "C-c C-k") #'coderag-cancel)
    map))

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
          (add-hook 'eldoc-documentation-functions #'coderag-eldoc-function nil t)
          (eldoc-mode 1)
          (coderag-refresh-lenses))
      (user-error (setq coderag-mode nil) (message "%s" (error-message-string err)))))
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
