;;; emacs_test.el --- batch test of editors/emacs/coderag.el against the real server  -*- lexical-binding: t; -*-
;;   CODERAG_BIN=... CODERAG_WS=<copy of tests/fixtures/shop> CODERAG_INDEX_DIR=... \
;;   emacs -Q --batch -L editors/emacs -l tests/editors/emacs_test.el
;; Prints one line per check and "emacs: N passed, N failed"; exits non-zero on failure.

(require 'package)
;; Debian's elpa-* packages (elpa-eglot on Emacs 28; eglot is built into 29+).
;; -Q skips the site-start that adds their directory.
(when (file-directory-p "/usr/share/emacs/site-lisp/elpa")
  (add-to-list 'package-directory-list "/usr/share/emacs/site-lisp/elpa"))
(setq package-user-dir (make-temp-file "coderag-elpa" t))
(package-initialize)
(require 'cl-lib)
(require 'coderag)
;; Time limits are last-resort bounds (a loaded one-core machine with a
;; sanitized server must never reach them); every wait ends on the state.
(setq jsonrpc-default-request-timeout 300
      eglot-connect-timeout 300
      coderag-request-timeout 600)

(defvar ct-passed 0)
(defvar ct-failed 0)

(defun ct-check (ok what &optional detail)
  (if ok
      (progn (setq ct-passed (1+ ct-passed)) (princ (format "ok   %s\n" what)))
    (setq ct-failed (1+ ct-failed))
    (princ (format "FAIL %s%s\n" what (if detail (format ": %S" detail) "")))))

(defun ct-finish ()
  (ignore-errors (eglot-shutdown-all))
  (princ (format "emacs %s (eglot %s): %d passed, %d failed\n" emacs-version
                 (or (ignore-errors (package-get-version)) (and (boundp 'eglot-version) eglot-version)
                     (let ((d (locate-library "eglot"))) (and d (file-name-nondirectory (directory-file-name (file-name-directory d))))))
                 ct-passed ct-failed))
  (kill-emacs (if (> ct-failed 0) 1 0)))

(defun ct-wait (pred seconds)
  (let ((end (+ (float-time) seconds)) v)
    (while (and (not (setq v (funcall pred))) (< (float-time) end))
      (accept-process-output nil 0.05))
    v))

(condition-case err
    (let* ((bin (or (getenv "CODERAG_BIN") (error "CODERAG_BIN")))
           (ws (file-name-as-directory (or (getenv "CODERAG_WS") (error "CODERAG_WS"))))
           (index-dir (getenv "CODERAG_INDEX_DIR"))
           (models (expand-file-name "shop/models.py" ws)))
      (setq coderag-program bin
            coderag-initialization-options (append (when index-dir (list :indexDir index-dir))
                                                   (list :llm (list :url "")))
            coderag-ask-mode "extractive")
      (coderag-eglot-setup)
      (ct-check (eq (cadr (assoc coderag-major-modes eglot-server-programs)) 'coderag-eglot-server)
                "registered with eglot for Python modes")
      ;; The workspace root is the fixture copy (no VCS there).
      (add-hook 'project-find-functions (lambda (_dir) (cons 'transient ws)))
      (find-file models)
      (ct-check (derived-mode-p 'python-mode) "python-mode")
      ;; What M-x eglot does, without prompting.
      (apply #'eglot (eglot--guess-contact))
      (let ((server (ct-wait #'eglot-current-server 300)))
        (ct-check (and server (cl-typep server 'coderag-eglot-server)) "eglot connected to coderag lsp")
        (unless server (error "no server")))
      (let ((state (ct-wait (lambda ()
                              (let ((s (plist-get (jsonrpc-request (eglot-current-server) :coderag/status
                                                                   (make-hash-table))
                                                  :state)))
                                (if (equal s "ready") s (sleep-for 0.1) nil)))
                            600)))
        (ct-check (equal state "ready") "index ready" state))
      (when index-dir
        (ct-check (file-directory-p index-dir) "indexDir from the initialization options used")
        (ct-check (not (file-exists-p (expand-file-name ".coderag" ws))) "no index in the workspace"))

      ;; M-x coderag-ask
      (goto-char (point-min)) (forward-line 35) (forward-char 15)
      (let* ((buf (coderag-ask "How is tax applied to an order total?"))
             (result coderag-last-result)
             (cites (plist-get result :citations)))
        (ct-check (equal (buffer-name buf) "*coderag*") "answer in *coderag*")
        (ct-check (equal (plist-get result :mode) "extractive") "extractive mode")
        (ct-check (> (length cites) 0) "citations" (length cites))
        (with-current-buffer buf
          (goto-char (point-min))
          (ct-check (search-forward "How is tax applied to an order total?" nil t) "buffer shows the question")
          ;; Collect every button's citation.
          (let (buttons)
            (goto-char (point-min))
            (let ((b (next-button (point-min) t)))
              (while b
                (push (list (button-label b) (button-get b 'coderag-citation) (button-start b)) buttons)
                (setq b (next-button (button-end b)))))
            (setq buttons (nreverse buttons))
            (ct-check (cl-every (lambda (b) (plist-get (nth 1 b) :path)) buttons) "every button carries a citation")
            (let ((listed (cl-remove-if-not (lambda (b) (string-match-p "\\`[^[]" (car b))) buttons)))
              (ct-check (= (length listed) (length cites)) "one listed button per citation"
                        (list (length listed) (length cites)))
              (ct-check (cl-every (lambda (pair)
                                    (let ((b (car pair)) (c (cdr pair)))
                                      (and (equal (car b) (coderag--citation-label c))
                                           (equal (nth 1 b) c))))
                                  (cl-mapcar #'cons listed (append cites nil)))
                        "listed buttons match the citations in order"))
            (let ((inline (cl-find-if (lambda (b) (equal (car b) "[shop/models.py:39-41]")) buttons)))
              (ct-check inline "inline marker [shop/models.py:39-41] is a button")
              (ct-check (and inline (equal (plist-get (nth 1 inline) :symbol) "apply_tax")
                             (= (plist-get (nth 1 inline) :startLine) 39)
                             (= (plist-get (nth 1 inline) :endLine) 41)
                             (equal (coderag--citation-file (nth 1 inline)) models))
                        "its target is apply_tax in shop/models.py:39-41")
              (let ((total (cl-find-if (lambda (b) (equal (plist-get (nth 1 b) :symbol) "Order.total")) buttons)))
                (ct-check (and total (= (plist-get (nth 1 total) :startLine) 34)
                               (= (plist-get (nth 1 total) :endLine) 36))
                          "Order.total cited at 34-36"))
              ;; Jump: push the apply_tax button.
              (when inline
                (with-current-buffer buf
                  (goto-char (nth 2 inline))
                  (push-button))
                ;; The button selected the window it visited the file in.
                (set-buffer (window-buffer (selected-window)))
                (ct-check (equal (buffer-file-name) models) "button jump visits shop/models.py" (buffer-file-name))
                (ct-check (= (line-number-at-pos) 39) "button jump lands on line 39" (line-number-at-pos))
                (ct-check (looking-at "def apply_tax") "point at def apply_tax")))
            ;; The first listed citation.
            (let ((first (cl-find-if (lambda (b) (string-match-p "\\`[^[]" (car b))) buttons)))
              (with-current-buffer buf (goto-char (nth 2 first)) (push-button))
              (set-buffer (window-buffer (selected-window)))
              (ct-check (and (equal (buffer-file-name) (coderag--citation-file (aref cites 0)))
                             (= (line-number-at-pos) (plist-get (aref cites 0) :startLine)))
                        "first citation button jumps to its start line")))))

      ;; The xref list of the citations.
      (let* ((items (coderag-xref-items))
             (first (car items))
             (loc (xref-item-location first)))
        (ct-check (= (length items) (length (plist-get coderag-last-result :citations))) "one xref item per citation")
        (ct-check (cl-some (lambda (it)
                             (let ((l (xref-item-location it)))
                               (and (equal (xref-location-group l) models)
                                    (= (xref-location-line l) 39))))
                           items)
                  "xref item for shop/models.py line 39")
        (let ((marker (xref-location-marker loc)))
          (ct-check (with-current-buffer (marker-buffer marker)
                      (save-excursion (goto-char marker)
                                      (= (line-number-at-pos) (plist-get (aref (plist-get coderag-last-result :citations) 0) :startLine))))
                    "first xref item's marker is on the first citation"))
        (coderag-xref)
        (ct-check (get-buffer "*xref*") "coderag-xref shows an *xref* buffer"))

      ;; Hover (eldoc) through eglot.
      (with-current-buffer (find-file-noselect models)
        (let ((h (jsonrpc-request (eglot-current-server) :textDocument/hover
                                  (list :textDocument (list :uri (coderag--path-to-uri models))
                                        :position (list :line 35 :character 16)))))
          (ct-check (string-match-p "apply_tax" (format "%S" (plist-get h :contents))) "hover on apply_tax")))
      (ct-finish))
  (error (ct-check nil "test script error" err) (ct-finish)))

;;; emacs_test.el ends here
