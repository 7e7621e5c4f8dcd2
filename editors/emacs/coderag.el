;;; coderag.el --- Ask questions about a Python codebase through coderag and eglot  -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; Keywords: tools, languages
;; URL: see the coderag repository, editors/emacs/

;;; Commentary:

;; Registers the coderag language server (`coderag lsp') with eglot for
;; Python buffers, and adds `coderag-ask': the question goes to the server as
;; a `coderag/ask' request; the answer is shown in a *coderag* buffer whose
;; citations are buttons that jump to the cited lines, and `coderag-xref'
;; lists the citations of the last answer in an xref buffer.
;;
;;   (require 'coderag)
;;   (coderag-eglot-setup)             ; register with eglot for Python modes
;;   (add-hook 'python-mode-hook #'eglot-ensure)
;;
;; Hover comes through eldoc as usual.  Works with Emacs 28 and eglot 1.9
;; (Debian 12's elpa-eglot) and with the eglot built into Emacs 29+.

;;; Code:

(require 'cl-lib)
(require 'eglot)
(require 'jsonrpc)
(require 'button)
(require 'xref)
(require 'url-util)
(require 'pulse)

(defgroup coderag nil
  "Ask questions about a codebase through the coderag language server."
  :group 'tools
  :prefix "coderag-")

(defcustom coderag-program "coderag"
  "The coderag executable."
  :type 'string)

(defcustom coderag-program-args '("lsp")
  "Arguments that start the language server."
  :type '(repeat string))

(defcustom coderag-major-modes
  '(python-mode python-ts-mode c-mode c-ts-mode c++-mode c++-ts-mode go-mode go-ts-mode
    rust-mode rust-ts-mode java-mode java-ts-mode js-mode js-ts-mode typescript-mode
    typescript-ts-mode tsx-ts-mode)
  "Major modes in which eglot uses coderag."
  :type '(repeat symbol))

(defcustom coderag-initialization-options nil
  "The server's initializationOptions, as a plist.
Nested, e.g. (:llm (:url \"http://127.0.0.1:8080\" :model \"qwen2.5-coder\")
:embed (:provider \"builtin\") :indexDir \"/tmp/idx\"), or flat with
string keys in an alist.  nil sends an empty object, and the server
then reads its CODERAG_* environment variables."
  :type 'sexp)

(defcustom coderag-ask-mode nil
  "Answer mode sent with each question.
nil lets the server choose (auto), \"extractive\" never calls an LLM,
\"llm\" requires one."
  :type '(choice (const :tag "auto" nil) (const "extractive") (const "llm")))

(defcustom coderag-request-timeout 180
  "Seconds to wait for an answer."
  :type 'integer)

(defcustom coderag-show-xref nil
  "When non-nil, `coderag-ask' also lists the citations in an xref buffer."
  :type 'boolean)

(defclass coderag-eglot-server (eglot-lsp-server) ()
  :documentation "The coderag language server.")

(cl-defmethod eglot-initialization-options ((_server coderag-eglot-server))
  (or coderag-initialization-options (make-hash-table)))

;;;###autoload
(defun coderag-eglot-setup ()
  "Register `coderag lsp' with eglot for `coderag-major-modes'.
Eglot runs one server per buffer, so this takes the place of another
Python server in these modes."
  (interactive)
  (let ((entry (cons coderag-major-modes
                     (cons 'coderag-eglot-server
                           (cons coderag-program coderag-program-args)))))
    (setq eglot-server-programs
          (cons entry (cl-remove-if (lambda (e) (equal (car e) coderag-major-modes))
                                    eglot-server-programs)))))

(defvar coderag-last-question nil "The last question asked.")
(defvar coderag-last-result nil "The last `coderag/ask' result, as a plist.")
(defvar coderag-last-root nil "The workspace root of the last answer.")

(defun coderag--server ()
  (or (eglot-current-server)
      (user-error "No coderag server for this buffer: open a Python file and run M-x eglot")))

(defun coderag--path-to-uri (path)
  (concat "file://"
          (url-hexify-string (expand-file-name path)
                             (append '(?/ ?- ?_ ?. ?~) url-unreserved-chars))))

(defun coderag--uri-to-path (uri)
  (if (string-prefix-p "file://" uri)
      (url-unhex-string (substring uri 7))
    uri))

(defun coderag--params (question)
  (let ((params (list :question question)))
    (when coderag-ask-mode (setq params (plist-put params :mode coderag-ask-mode)))
    (when buffer-file-name
      (setq params
            (plist-put (plist-put params :textDocument
                                  (list :uri (coderag--path-to-uri buffer-file-name)))
                       :position
                       (list :line (1- (line-number-at-pos))
                             :character (- (point) (line-beginning-position))))))
    params))

(defun coderag--citation-file (c)
  (let ((uri (plist-get c :uri)))
    (if (and uri (stringp uri))
        (coderag--uri-to-path uri)
      (expand-file-name (plist-get c :path) coderag-last-root))))

(defun coderag--citation-label (c)
  (let ((a (plist-get c :startLine)) (b (plist-get c :endLine)))
    (if (eql a b)
        (format "%s:%d" (plist-get c :path) a)
      (format "%s:%d-%d" (plist-get c :path) a b))))

(defun coderag--citation-symbol (c)
  (let ((s (plist-get c :symbol)))
    (if (and (stringp s) (not (string-empty-p s))) s "module code")))

(defun coderag-jump-to-citation (c &optional other-window)
  "Visit the file of citation C (a plist) and highlight its lines."
  (let ((file (coderag--citation-file c)))
    (if other-window (find-file-other-window file) (find-file file))
    (goto-char (point-min))
    (forward-line (1- (plist-get c :startLine)))
    (let ((beg (point)))
      (save-excursion
        (forward-line (1+ (- (plist-get c :endLine) (plist-get c :startLine))))
        (pulse-momentary-highlight-region beg (point))))
    (recenter)))

(defun coderag--button-action (button)
  (coderag-jump-to-citation (button-get button 'coderag-citation) t))

(define-button-type 'coderag-citation
  'action #'coderag--button-action
  'follow-link t
  'help-echo "mouse-2, RET: visit this citation")

(defun coderag--find-citation (cites path a b)
  "Index in CITES of the citation PATH A-B names, or of one overlapping it."
  (let ((exact nil) (overlap nil) (i 0))
    (mapc (lambda (c)
            (when (equal (plist-get c :path) path)
              (let ((s (plist-get c :startLine)) (e (plist-get c :endLine)))
                (when (and (not exact) (= s a) (= e b)) (setq exact i))
                (when (and (not overlap) (<= s b) (<= a e)) (setq overlap i))))
            (setq i (1+ i)))
          cites)
    (or exact overlap)))

(defun coderag--insert-answer (text cites)
  "Insert answer TEXT, making each [path:a-b] that names one of CITES a button."
  (let ((start (point)))
    (insert text)
    (save-excursion
      (goto-char start)
      (while (re-search-forward
              "\\[\\([^][ \t\n:]+\\):\\([0-9]+\\)\\(?:[-–—]\\([0-9]+\\)\\)?\\]" nil t)
        (let* ((a (string-to-number (match-string 2)))
               (b (if (match-string 3) (string-to-number (match-string 3)) a))
               (i (coderag--find-citation cites (match-string 1) a b)))
          (when i
            (make-text-button (match-beginning 0) (match-end 0)
                              'type 'coderag-citation
                              'coderag-citation (aref cites i))))))))

(defvar coderag-answer-mode-map
  (let ((map (make-sparse-keymap)))
    (set-keymap-parent map special-mode-map)
    (define-key map (kbd "TAB") #'forward-button)
    (define-key map (kbd "<backtab>") #'backward-button)
    (define-key map (kbd "x") #'coderag-xref)
    map))

(define-derived-mode coderag-answer-mode special-mode "CodeRAG"
  "Major mode of the *coderag* answer buffer; RET on a citation visits it.")

(defun coderag-show-answer (question result &optional root)
  "Show RESULT of QUESTION in the *coderag* buffer and return the buffer."
  (setq coderag-last-question question
        coderag-last-result result
        coderag-last-root (or root coderag-last-root default-directory))
  (let ((buf (get-buffer-create "*coderag*"))
        (cites (or (plist-get result :citations) [])))
    (with-current-buffer buf
      (let ((inhibit-read-only t))
        (erase-buffer)
        (coderag-answer-mode)
        (setq default-directory coderag-last-root)
        (insert (propertize question 'face 'bold) "\n\n")
        (coderag--insert-answer (string-trim-right (or (plist-get result :answer) "")) cites)
        (insert "\n\n" (propertize (format "Citations (%d, verified)" (length cites)) 'face 'bold) "\n")
        (let ((i 0))
          (mapc (lambda (c)
                  (setq i (1+ i))
                  (insert (format "%2d. " i))
                  (insert-text-button (coderag--citation-label c)
                                      'type 'coderag-citation 'coderag-citation c)
                  (insert "  " (coderag--citation-symbol c)
                          (if (equal (plist-get c :source) "auto") "  (server)" "")
                          "\n"))
                cites))
        (let ((rejected (plist-get result :rejected)))
          (when (and rejected (> (length rejected) 0))
            (insert "\n" (propertize "Rejected citations" 'face 'bold) "\n")
            (mapc (lambda (r) (insert (format "- %s — %s\n" (plist-get r :text) (plist-get r :reason))))
                  rejected)))
        (when (eq (plist-get result :indexing) t)
          (insert "\nThe index was still being built; ask again for a complete answer.\n"))
        (goto-char (point-min))))
    buf))

(defun coderag-xref-items (&optional result)
  "Xref items for the citations of RESULT (default: the last answer)."
  (let ((result (or result coderag-last-result)))
    (mapcar (lambda (c)
              (xref-make (format "%s  %s" (coderag--citation-label c) (coderag--citation-symbol c))
                         (xref-make-file-location (coderag--citation-file c)
                                                  (plist-get c :startLine) 0)))
            (or (plist-get result :citations) []))))

;;;###autoload
(defun coderag-xref ()
  "List the citations of the last answer in an xref buffer."
  (interactive)
  (unless coderag-last-result (user-error "No answer yet: M-x coderag-ask"))
  (let ((items (coderag-xref-items)))
    (xref-show-xrefs (lambda () items) nil)))

(defun coderag-request (question)
  "Send QUESTION as `coderag/ask' to this buffer's server; return the result."
  (jsonrpc-request (coderag--server) :coderag/ask (coderag--params question)
                   :timeout coderag-request-timeout))

;;;###autoload
(defun coderag-ask (question)
  "Ask QUESTION about this codebase; show the answer and its citations."
  (interactive
   (list (read-string "Ask CodeRAG: "
                      (when (use-region-p)
                        (format "What does %s do?"
                                (buffer-substring-no-properties (region-beginning) (region-end)))))))
  (when (string-empty-p (string-trim question)) (user-error "Empty question"))
  (let* ((server (coderag--server))
         (root (expand-file-name (project-root (eglot--project server))))
         (result (coderag-request question))
         (buf (coderag-show-answer question result root)))
    (display-buffer buf)
    (when coderag-show-xref (coderag-xref))
    buf))

;;;###autoload
(defun coderag-status ()
  "Show the index status."
  (interactive)
  (let ((s (jsonrpc-request (coderag--server) :coderag/status (make-hash-table))))
    (message "coderag: %s, %s files, %s chunks%s" (plist-get s :state)
             (plist-get s :files) (plist-get s :chunks)
             (let ((m (plist-get s :message))) (if (and (stringp m) (> (length m) 0)) (concat " — " m) "")))
    s))

;;;###autoload
(defun coderag-reindex ()
  "Rebuild the index."
  (interactive)
  (jsonrpc-request (coderag--server) :workspace/executeCommand
                   (list :command "coderag.reindex")))

(provide 'coderag)
;;; coderag.el ends here
