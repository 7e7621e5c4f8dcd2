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

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'xref)
(require 'url-util)
(require 'subr-x)
(require 'eldoc)
(require 'coderag-render)

(defgroup coderag nil
  "Ask questions about a codebase through the coderag language server."
  :group 'tools
  :prefix "coderag-")

(defcustom coderag-program "coderag"
  "The coderag executable (a name on `exec-path' or a file name)."
  :type 'string)

(defcustom coderag-program-args '("lsp")
  "Arguments that start the language server."
  :type '(repeat string))

(defcustom coderag-initialization-options nil
  "The server's initializationOptions, as a plist.
Nested, e.g. (:llm (:url \"http://127.0.0.1:8080\" :model \"qwen2.5-coder\")
:embed (:provider \"builtin\") :indexDir \"/tmp/idx\").  nil sends an empty
object, and the server then reads its CODERAG_* environment variables."
  :type 'sexp)

(defcustom coderag-ask-mode nil
  "Answer mode sent with each question.
nil lets the server choose (auto), \"extractive\" never calls an LLM,
\"llm\" requires one."
  :type '(choice (const :tag "auto" nil) (const "extractive") (const "llm")))

(defcustom coderag-request-timeout 600
  "Seconds after which a question is given up (the server is also told)."
  :type 'integer)

(defcustom coderag-history-size 20
  "How many answers `coderag-history' keeps."
  :type 'integer)

(defcustom coderag-followup-turns 3
  "How many earlier answers a follow-up question sends."
  :type 'integer)

(defcustom coderag-show-xref nil
  "When non-nil, each answer also lists its citations in an xref buffer."
  :type 'boolean)

(defcustom coderag-vcs-markers '(".git" ".hg" ".svn" ".jj")
  "Files or folders that mark a VCS root (step 1 of the root rule)."
  :type '(repeat string))

(defcustom coderag-project-markers '("pyproject.toml" "setup.py" "setup.cfg")
  "Files that mark a Python project root (step 2 of the root rule)."
  :type '(repeat string))

(defvar coderag-history nil "Answers, newest first: plists (:question :result :root :time).")
(defvar coderag-last-question nil "The last question answered.")
(defvar coderag-last-result nil "The last `coderag/ask' result, as a plist.")
(defvar coderag--connections (make-hash-table :test #'equal) "Root -> connection.")
(defvar coderag--ask nil "The running question, a plist (see `coderag--start-request').")
(defvar coderag--view nil "What the *coderag* buffer shows.")
(defvar coderag--seq 0)
(defvar coderag-mode)

;;;; The root rule

(defun coderag--nearest (dir markers)
  "The nearest folder from DIR upwards holding one of MARKERS."
  (locate-dominating-file
   dir (lambda (d) (cl-some (lambda (m) (file-exists-p (expand-file-name m d))) markers))))

(defun coderag-root (&optional file)
  "The workspace root of FILE (default: this buffer's file), and how it was found.
Returns (ROOT . HOW), HOW one of `vcs', `project', `opened', `file': the nearest
VCS root, else the nearest project marker, else the folder Emacs was opened in
\(`command-line-default-directory') when FILE lies in it.  `.coderag/' is never
a marker."
  (let* ((file (or file buffer-file-name))
         (opened (file-name-as-directory (expand-file-name (or command-line-default-directory
                                                               default-directory))))
         (dir (and file (file-name-directory (expand-file-name file))))
         root)
    (cond
     ((not dir) (cons (directory-file-name opened) 'opened))
     ((setq root (coderag--nearest dir coderag-vcs-markers))
      (cons (directory-file-name (expand-file-name root)) 'vcs))
     ((setq root (coderag--nearest dir coderag-project-markers))
      (cons (directory-file-name (expand-file-name root)) 'project))
     ((string-prefix-p opened dir) (cons (directory-file-name opened) 'opened))
     (t (cons (directory-file-name dir) 'file)))))

;;;; The connection

(defclass coderag-rpc (jsonrpc-process-connection)
  ((root :initarg :root :reader coderag--root)
   (ready :initform nil :accessor coderag--ready)
   (waiting :initform nil :accessor coderag--waiting)
   (progress :initform nil :accessor coderag--progress))
  :documentation "A `coderag lsp' process for one workspace root.")

(defun coderag--path-to-uri (path)
  "The file URI of PATH."
  (concat "file://"
          (url-hexify-string (expand-file-name path)
                             (append '(?/ ?- ?_ ?. ?~) url-unreserved-chars))))

(defun coderag--program ()
  "The server executable, or a `user-error' that says what to do."
  (or (and (file-name-absolute-p coderag-program) (file-executable-p coderag-program) coderag-program)
      (executable-find coderag-program)
      (user-error "coderag: the server program \"%s\" was not found%s; build coderag (scripts/setup.sh build) and set `coderag-program' to build/coderag"
                  coderag-program
                  (if (file-name-absolute-p coderag-program) "" " on `exec-path'"))))

(defun coderag--on-request (_conn method params)
  "Requests from the server."
  (pcase method
    ('workspace/configuration (make-vector (length (plist-get params :items)) nil))
    (_ nil)))

(defun coderag--on-notification (conn method params)
  "Notifications from the server."
  (pcase method
    ('$/progress (coderag--on-progress conn params))
    ('window/showMessage (message "%s" (plist-get params :message)))
    (_ nil)))

(defun coderag--send (conn method params success error)
  "Send request METHOD with PARAMS on CONN; call SUCCESS or ERROR.  Return its id."
  (let ((go (lambda ()
              (car (jsonrpc--async-request-1
                    conn method params
                    :success-fn success
                    :error-fn (lambda (e) (funcall error e))
                    :timeout-fn (lambda () (funcall error '(:code -1 :message "timed out")))
                    :timeout coderag-request-timeout)))))
    (if (coderag--ready conn)
        (funcall go)
      ;; Before `initialize' is answered: send when it is.
      (let ((cell (list nil)))
        (push (lambda () (setcar cell (funcall go))) (coderag--waiting conn))
        cell))))

(defun coderag--request-id (sent)
  "The id of a request `coderag--send' sent (or will send)."
  (if (consp sent) (car sent) sent))

(defun coderag--initialize (conn)
  "Send `initialize' on CONN, then `initialized' and what waited."
  (let ((root (coderag--root conn)))
    (jsonrpc-async-request
     conn :initialize
     (list :processId (emacs-pid)
           :clientInfo '(:name "coderag.el")
           :rootUri (coderag--path-to-uri root)
           :workspaceFolders (vector (list :uri (coderag--path-to-uri root)
                                           :name (file-name-nondirectory root)))
           :capabilities '(:window (:workDoneProgress t)
                           :workspace (:workspaceFolders t)
                           :textDocument (:hover (:contentFormat ["markdown" "plaintext"])
                                          :synchronization (:didSave t)))
           :initializationOptions (or coderag-initialization-options (make-hash-table)))
     :success-fn (lambda (_)
                   (jsonrpc-notify conn :initialized (make-hash-table))
                   (setf (coderag--ready conn) t)
                   (mapc #'funcall (reverse (coderag--waiting conn)))
                   (setf (coderag--waiting conn) nil))
     :error-fn (lambda (e) (message "coderag: initialize failed: %s" (plist-get e :message)))
     :timeout 60)))

(defun coderag-connection (&optional root)
  "The connection for ROOT (default: this buffer's root), started when needed."
  (let* ((root (or root (car (coderag-root))))
         (conn (gethash root coderag--connections)))
    (if (and conn (jsonrpc-running-p conn))
        conn
      (let* ((program (coderag--program))
             (default-directory (file-name-as-directory root))
             (proc (make-process :name (format "coderag %s" root)
                                 :command (cons program coderag-program-args)
                                 :connection-type 'pipe
                                 :coding 'utf-8-emacs-unix
                                 :noquery t
                                 :stderr (get-buffer-create (format " *coderag stderr %s*" root))))
             (conn (make-instance 'coderag-rpc
                                  :name (format "coderag %s" root)
                                  :process proc :root root
                                  :events-buffer-scrollback-size 0
                                  :request-dispatcher #'coderag--on-request
                                  :notification-dispatcher #'coderag--on-notification
                                  :on-shutdown (lambda (_c) (remhash root coderag--connections)))))
        (puthash root conn coderag--connections)
        (coderag--initialize conn)
        (when (eq (cdr (coderag-root)) 'file)
          (message "coderag: %s has no VCS or project root and lies outside %s: indexing %s"
                   buffer-file-name command-line-default-directory root))
        conn))))

(defun coderag-shutdown-all ()
  "Stop every coderag server this Emacs started."
  (interactive)
  (maphash (lambda (_root conn) (ignore-errors (jsonrpc-shutdown conn t))) coderag--connections)
  (clrhash coderag--connections))

;;;; Progress and the mode line

(defun coderag--progress-text (p)
  "Mode-line text of progress plist P (:title :message :percentage)."
  (string-trim
   (format "%s%s %s" (or (plist-get p :title) "")
           (if (plist-get p :percentage) (format " %d%%%%" (plist-get p :percentage)) "")
           (or (plist-get p :message) ""))))

(defun coderag-mode-line ()
  "The mode-line text: the running question, else this root's indexing, else \"\"."
  (let ((conn (and buffer-file-name (gethash (car (coderag-root)) coderag--connections))))
    (cond
     ((and coderag--ask (not (plist-get coderag--ask :done)))
      (format " CodeRAG[%s]" (or (plist-get coderag--ask :message) "asking")))
     ((and conn (coderag--progress conn) (not (plist-get (coderag--progress conn) :done)))
      (format " CodeRAG[%s]" (coderag--progress-text (coderag--progress conn))))
     (t " CodeRAG"))))

(defun coderag--on-progress (conn params)
  "A $/progress notification PARAMS on CONN."
  (let* ((token (plist-get params :token))
         (v (plist-get params :value))
         (a coderag--ask))
    (cond
     ((and a (equal token (plist-get a :partial-token))) (coderag--on-partial a v))
     ((and a (equal token (plist-get a :token)))
      (when (stringp (plist-get v :message))
        (setq coderag--ask (plist-put a :message (plist-get v :message))))
      (coderag--refresh))
     (t (let ((p (if (equal (plist-get v :kind) "begin") nil (coderag--progress conn))))
          (dolist (k '(:title :message :percentage))
            (when (plist-get v k) (setq p (plist-put p k (plist-get v k)))))
          (setf (coderag--progress conn) (plist-put p :done (equal (plist-get v :kind) "end"))))))
    (force-mode-line-update t)))

(defun coderag--on-partial (a v)
  "A partial result V of the running question A: context found, or text so far."
  (let ((text (plist-get v :answer)))
    (when (and (stringp text) (not (string-empty-p text))) (setq a (plist-put a :text text)))
    (when (plist-get v :context) (setq a (plist-put a :context (plist-get v :context))))
    (setq coderag--ask (plist-put a :partials (1+ (or (plist-get a :partials) 0))))
    (coderag--refresh)))

;;;; The answer buffer

(defvar coderag-answer-mode-map
  (let ((map (make-sparse-keymap)))
    (set-keymap-parent map special-mode-map)
    (define-key map (kbd "TAB") #'forward-button)
    (define-key map (kbd "<backtab>") #'backward-button)
    (define-key map (kbd "x") #'coderag-xref)
    (define-key map (kbd "c") #'coderag-toggle-context)
    (define-key map (kbd "h") #'coderag-history)
    (define-key map (kbd "f") #'coderag-followup)
    (define-key map (kbd "C-c C-k") #'coderag-cancel)
    map))

(define-derived-mode coderag-answer-mode special-mode "CodeRAG"
  "Major mode of the *coderag* answer buffer; RET on a citation visits it."
  (setq-local mode-line-process '(:eval (if coderag--ask (format " [%s]" (or (plist-get coderag--ask :message) "asking")) ""))))

(defun coderag--render-view (view)
  "Show VIEW in the *coderag* buffer and return the buffer."
  (setq coderag--view view)
  (let ((buf (get-buffer-create "*coderag*")))
    (with-current-buffer buf
      (let ((inhibit-read-only t) (pt (point)))
        (unless (derived-mode-p 'coderag-answer-mode) (coderag-answer-mode))
        (erase-buffer)
        (when (plist-get view :root) (setq default-directory (file-name-as-directory (plist-get view :root))))
        (coderag-render-answer view)
        (goto-char (if (plist-get view :result) (point-min) (min pt (point-max))))))
    buf))

(defun coderag--refresh ()
  "Redraw the *coderag* buffer of the running question."
  (when (and coderag--ask (eq (plist-get coderag--view :pending) coderag--ask)
             (get-buffer "*coderag*"))
    (coderag--render-view coderag--view)))

(defun coderag-show-answer (question result &optional root)
  "Show RESULT of QUESTION in the *coderag* buffer and return the buffer."
  (setq coderag-last-question question
        coderag-last-result result
        coderag-last-root (or root coderag-last-root default-directory))
  (coderag--render-view (list :question question :result result :root coderag-last-root)))

(defun coderag-toggle-context ()
  "Show or hide the context the shown answer used (scores, via)."
  (interactive)
  (unless (plist-get coderag--view :result) (user-error "No answer shown"))
  (coderag--render-view (plist-put (copy-sequence coderag--view) :show-context
                                   (not (plist-get coderag--view :show-context)))))

(defun coderag-show-context ()
  "Show the last answer with the context it used."
  (interactive)
  (unless coderag-last-result (user-error "No answer yet: M-x coderag-ask"))
  (display-buffer (coderag--render-view (list :question coderag-last-question :result coderag-last-result
                                              :root coderag-last-root :show-context t))))

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
    (funcall xref-show-xrefs-function (lambda () items)
             `((window . ,(selected-window)) (display-action . nil)))))

;;;; Questions

(defun coderag--params (question &optional followup)
  "The `coderag/ask' params for QUESTION asked here; FOLLOWUP adds the history."
  (let ((params (list :question question)))
    (when coderag-ask-mode (setq params (plist-put params :mode coderag-ask-mode)))
    (when (and followup coderag-history)
      (setq params (plist-put params :history (coderag-history-turns))))
    (when buffer-file-name
      (setq params
            (plist-put (plist-put params :textDocument
                                  (list :uri (coderag--path-to-uri buffer-file-name)))
                       :position
                       (list :line (1- (line-number-at-pos))
                             :character (- (point) (line-beginning-position))))))
    params))

(defun coderag-history-turns (&optional n)
  "The last N (default `coderag-followup-turns') answers as history, oldest first."
  (let ((turns (seq-take coderag-history (or n coderag-followup-turns))))
    (vconcat (mapcar (lambda (h) (list :question (plist-get h :question)
                                       :answer (or (plist-get (plist-get h :result) :answer) "")))
                     (reverse turns)))))

(defun coderag--remember (question result root)
  "Keep RESULT of QUESTION in `coderag-history'."
  (push (list :question question :result result :root root :time (current-time)) coderag-history)
  (when (> (length coderag-history) coderag-history-size)
    (setcdr (nthcdr (1- coderag-history-size) coderag-history) nil)))

(defun coderag--start-request (conn method params question &optional callback)
  "Send METHOD with PARAMS for QUESTION on CONN; show it in *coderag* at once.
METHOD is coderag/ask or an executeCommand.  Returns the buffer, where
progress and the streamed text appear; CALLBACK gets (RESULT ERROR) at
the end."
  (when coderag--ask (ignore-errors (coderag-cancel)))
  (setq coderag--seq (1+ coderag--seq))
  (let* ((token (format "coderag-el-%d-%d" (emacs-pid) coderag--seq))
         (ptoken (concat token "-partial"))
         (target (if (eq method :coderag/ask) params (aref (plist-get params :arguments) 0)))
         (root (coderag--root conn))
         a)
    (setq target (plist-put (plist-put target :workDoneToken token) :partialResultToken ptoken))
    (if (eq method :coderag/ask) (setq params target) (aset (plist-get params :arguments) 0 target))
    (setq a (list :question question :conn conn :token token :partial-token ptoken :message "asking"))
    (setq coderag--ask a)
    (let ((finish
           (lambda (result err)
             (when (eq coderag--ask a) (setq coderag--ask nil))
             (setq a (plist-put a :done t))
             (cond
              (result
               (coderag--remember question result root)
               (coderag-show-answer question result root)
               (dolist (b (buffer-list))
                 (with-current-buffer b
                   (when (and coderag-mode buffer-file-name (string-prefix-p root buffer-file-name))
                     (coderag-refresh-lenses))))
               (when coderag-show-xref (coderag-xref)))
              ((eql (plist-get err :code) -32800) (setq a (plist-put a :cancelled t)))
              (t (setq a (plist-put a :error (format "Error: %s" (plist-get err :message))))
                 (message "coderag: %s" (plist-get err :message))))
             (unless result (coderag--render-view (list :question question :pending a :root root)))
             (force-mode-line-update t)
             (when callback (funcall callback result err)))))
      (setq a (plist-put a :sent (coderag--send conn method params
                                                (lambda (r) (funcall finish r nil))
                                                (lambda (e) (funcall finish nil e)))))
      (setq coderag--ask a)
      (force-mode-line-update t)
      (coderag--render-view (list :question question :pending a :root root)))))

;;;###autoload
(defun coderag-ask (question &optional followup callback)
  "Ask QUESTION about this codebase; the answer streams into *coderag*.
Returns the buffer at once (the answer arrives later).  With FOLLOWUP, the last
answers go with it as history.  CALLBACK, when given, gets (RESULT ERROR)."
  (interactive
   (list (read-string (if current-prefix-arg "Follow-up question: " "Ask CodeRAG: ")
                      (when (use-region-p)
                        (format "What does %s do?"
                                (buffer-substring-no-properties (region-beginning) (region-end)))))
         current-prefix-arg))
  (when (string-empty-p (string-trim question)) (user-error "Empty question"))
  (let ((buf (coderag--start-request (coderag-connection
                                      ;; From *coderag*: the server of the answer shown.
                                      (and (not buffer-file-name) (derived-mode-p 'coderag-answer-mode)
                                           coderag-last-root (directory-file-name coderag-last-root)))
                                     :coderag/ask
                                     (coderag--params question followup) question callback)))
    (when (called-interactively-p 'any) (display-buffer buf))
    buf))

;;;###autoload
(defun coderag-followup (question)
  "Ask QUESTION as a follow-up of the last answers."
  (interactive (list (read-string "Follow-up question: ")))
  (display-buffer (coderag-ask question t)))

;;;###autoload
(defun coderag-explain ()
  "Explain the definition under point with the LLM (the server's coderag.explain)."
  (interactive)
  (let ((arg (list :textDocument (list :uri (coderag--path-to-uri buffer-file-name))
                   :position (list :line (1- (line-number-at-pos))
                                   :character (- (point) (line-beginning-position))))))
    (display-buffer
     (coderag--start-request (coderag-connection) :workspace/executeCommand
                             (list :command "coderag.explain" :arguments (vector arg))
                             (format "Explain %s" (or (thing-at-point 'symbol t) "this"))))))

;;;###autoload
(defun coderag-cancel ()
  "Cancel the running question ($/cancelRequest)."
  (interactive)
  (let* ((a coderag--ask) (id (and a (coderag--request-id (plist-get a :sent)))))
    (unless id (user-error "No question is running"))
    (jsonrpc-notify (plist-get a :conn) :$/cancelRequest (list :id id))
    (setq coderag--ask (plist-put a :message "cancelling"))
    (coderag--refresh)
    t))

;;;###autoload
(defun coderag-history ()
  "Reopen one of the last answers."
  (interactive)
  (unless coderag-history (user-error "No answers yet"))
  (let* ((items (cl-loop for h in coderag-history for i from 1
                         collect (cons (format "%d. %s" i (plist-get h :question)) h)))
         (h (cdr (assoc (completing-read "CodeRAG answer: " items nil t) items))))
    (display-buffer (coderag-show-answer (plist-get h :question) (plist-get h :result) (plist-get h :root)))))

(defun coderag-status-text (s)
  "A line for a `coderag/status' result S."
  (let ((one (lambda (x)
               (pcase (plist-get x :state)
                 ("indexing"
                  (let ((total (or (plist-get x :total) 0)) (done (or (plist-get x :indexed) 0)))
                    (if (> total 0)
                        (concat (format "indexing %d/%d files (%d%%)" done total (/ (* 100 done) total))
                                (if (> (or (plist-get x :files) 0) 0)
                                    (format "; %d files searchable meanwhile" (plist-get x :files)) ""))
                      "indexing (scanning files)")))
                 ("ready" (format "ready: %d files, %d chunks" (or (plist-get x :files) 0)
                                  (or (plist-get x :chunks) 0)))
                 (_ (format "error: %s" (or (plist-get x :message) "unknown"))))))
        (roots (append (plist-get s :roots) nil)))
    (if (<= (length roots) 1)
        (concat (funcall one s) (if roots (concat " — " (plist-get (car roots) :root)) ""))
      (mapconcat (lambda (r) (concat (plist-get r :root) ": " (funcall one r))) roots "; "))))

;;;###autoload
(defun coderag-status (&optional callback)
  "Show the index status (asynchronously); CALLBACK gets the result."
  (interactive)
  (coderag--send (coderag-connection) :coderag/status (make-hash-table)
                 (lambda (s) (message "coderag: %s" (coderag-status-text s))
                   (when callback (funcall callback s)))
                 (lambda (e) (message "coderag: status failed: %s" (plist-get e :message)))))

;;;###autoload
(defun coderag-reindex ()
  "Rebuild the index."
  (interactive)
  (coderag--send (coderag-connection) :workspace/executeCommand (list :command "coderag.reindex")
                 #'ignore (lambda (e) (message "coderag: %s" (plist-get e :message)))))

;;;; Hover through eldoc, document sync

(defvar-local coderag--version 0)
(defvar-local coderag--change-timer nil)

(defun coderag--doc-id () (list :uri (coderag--path-to-uri buffer-file-name)))

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

;;;; Code lenses (callers, references, "Ask CodeRAG", "cited for")

(defvar-local coderag--lens-overlays nil)

(defun coderag--run-lens (cmd)
  "Run lens command CMD (coderag.ask or coderag.explain) with streaming."
  (let* ((args (plist-get cmd :arguments))
         (arg (and args (> (length args) 0) (aref args 0)))
         (arg (if (stringp arg) (list :question arg) (copy-sequence arg))))
    (display-buffer
     (coderag--start-request (coderag-connection) :workspace/executeCommand
                             (list :command (plist-get cmd :command) :arguments (vector arg))
                             (or (plist-get arg :question) "Explain")))))

(defun coderag--lens-text (lens)
  "The text of LENS: a clickable title for commands, grey for counts."
  (let* ((cmd (plist-get lens :command)) (title (or (plist-get cmd :title) "")))
    (if (member (plist-get cmd :command) '("coderag.ask" "coderag.explain"))
        (propertize title 'face 'link 'mouse-face 'highlight 'help-echo "mouse-1: run; C-c C-r l runs this line's"
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
