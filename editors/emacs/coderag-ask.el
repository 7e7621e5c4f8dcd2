;;; coderag-ask.el --- Questions, the answer buffer and its history  -*- lexical-binding: t; -*-

;; Part of coderag.el (see there).

;;; Commentary:

;; `coderag-ask', `coderag-followup', `coderag-explain' and `coderag-cancel':
;; a question is sent at once and *coderag* shows its progress, the streamed
;; text, then the verified answer (rendered by coderag-render.el).  Answers
;; are kept for `coderag-history', follow-ups and `coderag-xref'; also
;; `coderag-status' and `coderag-reindex'.

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'xref)
(require 'subr-x)
(require 'coderag-render)
(require 'coderag-connection)

(defcustom coderag-ask-mode nil
  "Answer mode sent with each question.
nil lets the server choose (auto), \"extractive\" never calls an LLM,
\"llm\" requires one."
  :group 'coderag
  :type '(choice (const :tag "auto" nil) (const "extractive") (const "llm")))

(defcustom coderag-history-size 20
  "How many answers `coderag-history' keeps."
  :group 'coderag
  :type 'integer)

(defcustom coderag-followup-turns 3
  "How many earlier answers a follow-up question sends."
  :group 'coderag
  :type 'integer)

(defcustom coderag-show-xref nil
  "When non-nil, each answer also lists its citations in an xref buffer."
  :group 'coderag
  :type 'boolean)

(defcustom coderag-history-directory (locate-user-emacs-file "coderag-history/")
  "Where each workspace's answers are kept across restarts (one file per root).
nil keeps them only for the session."
  :group 'coderag
  :type '(choice (const :tag "this session only" nil) directory))

(defvar coderag-history nil "Answers, newest first: plists (:question :result :root :time).")
(defvar coderag--history-loaded nil "Roots whose saved history was read.")
(defvar coderag-last-question nil "The last question answered.")
(defvar coderag-last-result nil "The last `coderag/ask' result, as a plist.")
(defvar coderag--view nil "What the *coderag* buffer shows.")
(defvar coderag--seq 0)
(defvar coderag-mode)
(declare-function coderag-refresh-lenses "coderag-lens" (&optional callback))
(declare-function coderag-flush-changes "coderag" ())

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
  "Major mode of the *coderag* answer buffer; RET on a citation visits it.
Long lines wrap between words (`visual-line-mode'), never inside a name."
  (visual-line-mode 1)
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

(defun coderag--goto-context (buf)
  "Put the context heading of BUF at the top of its window (where one looks)."
  (with-current-buffer buf
    (goto-char (point-min))
    (when (search-forward "Context the answer used" nil t)
      (goto-char (line-beginning-position))
      (let ((w (get-buffer-window buf)))
        (when w (set-window-point w (point)) (set-window-start w (point)))))))

(defun coderag-toggle-context ()
  "Show or hide the context the shown answer used (scores, via), in view."
  (interactive)
  (unless (plist-get coderag--view :result) (user-error "No answer shown"))
  (let* ((on (not (plist-get coderag--view :show-context)))
         (buf (coderag--render-view (plist-put (copy-sequence coderag--view) :show-context on))))
    (when on (coderag--goto-context buf))
    buf))

(defun coderag-show-context ()
  "Show the last answer with the context it used."
  (interactive)
  (unless coderag-last-result (user-error "No answer yet: M-x coderag-ask"))
  (let ((buf (coderag--render-view (list :question coderag-last-question :result coderag-last-result
                                         :root coderag-last-root :show-context t))))
    (display-buffer buf)
    (coderag--goto-context buf)
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

(defun coderag--here-root ()
  "The workspace root of this buffer (or of the answer shown), or nil."
  (cond (buffer-file-name (car (coderag-root)))
        (coderag-last-root (directory-file-name coderag-last-root))))

(defun coderag--root-history (&optional root)
  "The kept answers of ROOT (default: here), newest first; all when no root."
  (let ((root (or root (coderag--here-root))))
    (if root
        (cl-remove-if-not (lambda (h) (equal (directory-file-name (or (plist-get h :root) "")) root))
                          coderag-history)
      coderag-history)))

(defun coderag-history-turns (&optional n)
  "The last N (default `coderag-followup-turns') answers here, oldest first."
  (let ((turns (seq-take (coderag--root-history) (or n coderag-followup-turns))))
    (vconcat (mapcar (lambda (h) (list :question (plist-get h :question)
                                       :answer (or (plist-get (plist-get h :result) :answer) "")))
                     (reverse turns)))))

(defun coderag-history-file (root)
  "The file keeping ROOT's answers, or nil (see `coderag-history-directory')."
  (when coderag-history-directory
    (expand-file-name (concat (replace-regexp-in-string "[/\\:]" "!" (directory-file-name root)) ".eld")
                      coderag-history-directory)))

(defun coderag--save-history (root)
  "Write ROOT's last `coderag-history-size' answers to its file."
  (let ((file (coderag-history-file root)))
    (when file
      (condition-case err
          (progn
            (make-directory (file-name-directory file) t)
            (with-temp-file file
              (let ((print-length nil) (print-level nil) (print-circle nil))
                (insert ";; coderag answers of " root "\n")
                (prin1 (seq-take (coderag--root-history root) coderag-history-size) (current-buffer)))))
        (file-error (message "coderag: could not save the history: %s" (error-message-string err)))))))

(defun coderag-load-history (root)
  "Read ROOT's saved answers into `coderag-history' (once per session)."
  (unless (member root coderag--history-loaded)
    (push root coderag--history-loaded)
    (let ((file (coderag-history-file root)))
      (when (and file (file-readable-p file))
        (let ((saved (ignore-errors
                       (with-temp-buffer (insert-file-contents file) (goto-char (point-min)) (read (current-buffer))))))
          (dolist (h (and (listp saved) saved))
            (unless (cl-some (lambda (k) (and (equal (plist-get k :time) (plist-get h :time))
                                              (equal (plist-get k :question) (plist-get h :question))))
                             coderag-history)
              (setq coderag-history (append coderag-history (list h)))))
          (setq coderag-history
                (sort coderag-history (lambda (a b) (time-less-p (plist-get b :time) (plist-get a :time))))))))))

(defun coderag--remember (question result root)
  "Keep RESULT of QUESTION in `coderag-history' and in ROOT's file."
  (coderag-load-history root)
  (push (list :question question :result result :root root :time (current-time)) coderag-history)
  (let ((mine (coderag--root-history root)))
    (when (> (length mine) coderag-history-size)
      (let ((drop (nthcdr coderag-history-size mine)))
        (setq coderag-history (cl-remove-if (lambda (h) (memq h drop)) coderag-history)))))
  (coderag--save-history root))

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
               ;; an explanation's result names its definition ("Explain `Headers.render`")
               (when (stringp (plist-get result :title)) (setq question (plist-get result :title)))
               (coderag--remember question result root)
               (coderag-show-answer question result root)
               (when (eq (plist-get result :indexing) t)
                 (setq coderag--reask (list conn method params question callback)))
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
  (coderag-flush-changes)
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
  "Explain the definition under point (the server's coderag.explain).
Runs the explain action the server offers at point: with an LLM, \"Explain
`NAME' with the LLM\"; without one, \"Show `NAME' and its callers\" (no LLM
needed).  When it offers none, asks for the LLM's explanation (the server
says why it cannot give one)."
  (interactive)
  (let ((conn (coderag-connection))
        (word (or (thing-at-point 'symbol t) "this"))
        (arg (list :textDocument (coderag--doc-id) :position (coderag--point-position))))
    (coderag--code-actions
     conn
     (lambda (cmds)
       (let ((cmd (cl-find "coderag.explain" cmds :key (lambda (c) (plist-get c :command)) :test #'equal)))
         (display-buffer
          (if cmd
              (coderag--run-command conn cmd)
            (coderag--start-request conn :workspace/executeCommand
                                    (list :command "coderag.explain" :arguments (vector arg))
                                    (format "Explain %s" word)))))))))

(defun coderag--point-position ()
  "Point as an LSP position."
  (list :line (1- (line-number-at-pos)) :character (- (point) (line-beginning-position))))

(defun coderag--run-command (conn cmd &optional callback)
  "Run the server's command CMD (:title :command :arguments) on CONN, streamed.
CMD is coderag.ask or coderag.explain, from a code lens or a code action; its
answer goes to *coderag*, which is returned; CALLBACK gets (RESULT ERROR)."
  (let* ((args (plist-get cmd :arguments))
         (arg (and args (> (length args) 0) (aref args 0)))
         (arg (if (stringp arg) (list :question arg) (copy-sequence arg)))
         ;; shown until the result's title replaces it
         (title (replace-regexp-in-string " *(CodeRAG)\\'" "" (or (plist-get cmd :title) ""))))
    (coderag--start-request conn :workspace/executeCommand
                            (list :command (plist-get cmd :command) :arguments (vector arg))
                            (or (plist-get arg :question) (and (not (string-empty-p title)) title) "Explain")
                            callback)))

(defun coderag--code-actions (conn callback)
  "Ask CONN for its code actions at point; CALLBACK gets their commands.
CALLBACK runs from a timer, not the process filter (it may ask the user)."
  (coderag-flush-changes)
  (let ((pos (coderag--point-position)))
    (coderag--send conn :textDocument/codeAction
                   (list :textDocument (coderag--doc-id) :range (list :start pos :end pos)
                         :context (list :diagnostics []))
                   (lambda (actions)
                     (let ((cmds (delq nil (mapcar (lambda (a)
                                                     (let ((c (plist-get a :command)))
                                                       (if (stringp c) a c)))
                                                   (and (sequencep actions) actions)))))
                       (run-at-time 0 nil callback cmds)))
                   (lambda (e) (message "coderag: %s" (plist-get e :message))))))

;;;###autoload
(defun coderag-code-action ()
  "Choose one of the server's code actions at point and run it.
Without an LLM the server offers \"Show `NAME' and its callers\"; with one,
\"Explain `NAME' with the LLM\".  The answer streams into *coderag*."
  (interactive)
  (let ((conn (coderag-connection)))
    (coderag--code-actions
     conn
     (lambda (cmds)
       (if (null cmds)
           (message "coderag: no action here (put point on a name)")
         (let* ((titles (mapcar (lambda (c) (plist-get c :title)) cmds))
                (pick (if (cdr cmds) (completing-read "CodeRAG action: " titles nil t) (car titles))))
           (display-buffer
            (coderag--run-command conn (cl-find pick cmds :key (lambda (c) (plist-get c :title))
                                                :test #'equal)))))))))

(defun coderag-reask-now ()
  "Ask again the question answered while the index was being built.
Its result said `indexing'; indexing has ended, so the new answer replaces it."
  (let ((r coderag--reask))
    (setq coderag--reask nil)
    (when (and r (null coderag--ask) (jsonrpc-running-p (nth 0 r)))
      (apply #'coderag--start-request r))))

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
  (let ((root (coderag--here-root))) (when root (coderag-load-history root)))
  (unless (coderag--root-history) (user-error "No answers yet"))
  (let* ((items (cl-loop for h in (coderag--root-history) for i from 1
                         collect (cons (format "%d. %s" i (plist-get h :question)) h)))
         (h (cdr (assoc (coderag--read-choice "CodeRAG answer" items) items))))
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
                 ("ready" (let ((partial (coderag-partial-index-text (plist-get x :partialIndex))))
                            (if partial
                                (format "%s (%d files searchable)" partial (or (plist-get x :files) 0))
                              (format "ready: %d files, %d chunks" (or (plist-get x :files) 0)
                                      (or (plist-get x :chunks) 0)))))
                 (_ (format "error: %s" (or (plist-get x :message) "unknown"))))))
        (roots (append (plist-get s :roots) nil)))
    (if (<= (length roots) 1)
        (concat (funcall one (if (and roots (not (plist-get s :partialIndex)))
                                 (append (list :partialIndex (plist-get (car roots) :partialIndex)) s)
                               s))
                (if roots (concat " — " (plist-get (car roots) :root)) ""))
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

(provide 'coderag-ask)
;;; coderag-ask.el ends here
