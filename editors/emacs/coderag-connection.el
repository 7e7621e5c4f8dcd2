;;; coderag-connection.el --- The coderag server: root rule, connection, progress  -*- lexical-binding: t; -*-

;; Part of coderag.el (see there).

;;; Commentary:

;; Which workspace root a file belongs to, one `coderag lsp' process per root
;; over jsonrpc.el (started on first use, initialized before anything else is
;; sent), and the server's $/progress: indexing in the mode line, a running
;; question's progress and partial results handed to coderag-ask.el.

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'url-util)
(require 'subr-x)

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

(defcustom coderag-request-timeout 600
  "Seconds after which a question is given up (the server is also told)."
  :type 'integer)

(defcustom coderag-vcs-markers '(".git" ".hg" ".svn" ".jj")
  "Files or folders that mark a VCS root (step 1 of the root rule)."
  :type '(repeat string))

(defcustom coderag-project-markers '("pyproject.toml" "setup.py" "setup.cfg" "configure.ac"
    "compile_commands.json" ".clangd" "go.mod" "go.work" "Cargo.toml" "pom.xml" "build.gradle"
    "build.gradle.kts" "settings.gradle" "settings.gradle.kts" "package.json" "deno.json"
    "tsconfig.json")
  "Files that mark a project root (step 2 of the root rule): the server's, in its
order (`coderag root --markers`; tests/cli/root_markers.sh checks)."
  :type '(repeat string))

(defvar coderag--connections (make-hash-table :test #'equal) "Root -> connection.")
(defvar coderag--ask nil "The running question, a plist (see `coderag--start-request').")
(defvar coderag--reask nil
  "(CONN METHOD PARAMS QUESTION CALLBACK) of an answer given while indexing, to ask again.")
(declare-function coderag-reask-now "coderag-ask" ())
(declare-function coderag--refresh "coderag-ask" ())
(declare-function coderag-load-history "coderag-ask" (root))

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

(defvar coderag--told nil "Messages `coderag--tell-once' has shown as a warning.")

(defun coderag--tell-once (msg)
  "Say MSG in the echo area and, the first time, as a warning that stays.
Other messages (the file's mode, eldoc) overwrite the echo area a moment
later; the *Warnings* buffer keeps it."
  (unless (member msg coderag--told)
    (push msg coderag--told)
    (display-warning 'coderag (string-remove-prefix "coderag: " msg) :error))
  (message "%s" msg))

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
        (coderag-load-history root)
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

(defun coderag--doc-id () (list :uri (coderag--path-to-uri buffer-file-name)))

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
          (setf (coderag--progress conn) (plist-put p :done (equal (plist-get v :kind) "end")))
          (when (and (equal (plist-get v :kind) "end") coderag--reask (eq (car coderag--reask) conn))
            (run-at-time 0 nil #'coderag-reask-now)))))
    (force-mode-line-update t)))

(defun coderag--on-partial (a v)
  "A partial result V of the running question A: context found, or text so far."
  (let ((text (plist-get v :answer)))
    (when (and (stringp text) (not (string-empty-p text))) (setq a (plist-put a :text text)))
    (when (plist-get v :context) (setq a (plist-put a :context (plist-get v :context))))
    (setq coderag--ask (plist-put a :partials (1+ (or (plist-get a :partials) 0))))
    (coderag--refresh)))

(provide 'coderag-connection)
;;; coderag-connection.el ends here
