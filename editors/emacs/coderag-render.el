;;; coderag-render.el --- Rendering of coderag answers and hovers  -*- lexical-binding: t; -*-

;; Part of coderag.el (see there).

;;; Commentary:

;; Turns the server's markdown into text with faces and buttons: headings,
;; bold, code spans, fenced code, lists, links (`file://…#L12' opens the file
;; at that line) and `[path:a-b]' citations (buttons that visit the cited
;; lines).  Nothing here talks to the server.

;;; Code:

(require 'cl-lib)
(require 'button)
(require 'pulse)
(require 'subr-x)
(require 'url-util)

(defgroup coderag-faces nil
  "Faces of the coderag answer buffer."
  :group 'coderag)

(defface coderag-heading-face '((t :inherit bold :height 1.1))
  "Headings of an answer.")
(defface coderag-code-face '((t :inherit font-lock-constant-face))
  "Code spans and fenced code of an answer.")
(defface coderag-provisional-face '((t :inherit shadow :slant italic))
  "Streamed text that is not yet verified.")
(defface coderag-rejected-face '((t :inherit error :strike-through t))
  "Citations the server rejected.")
(defface coderag-progress-face '((t :inherit success))
  "The progress line of a running question.")
(defface coderag-warning-face '((t :inherit warning))
  "A weak or missing match.")

(defvar coderag-last-root nil "The workspace root of the last answer.")

(defun coderag-partial-index-text (p)
  "What a person reads of an index a pass has not finished, or nil.
P: a result's or a root's partialIndex."
  (when (and p (> (or (plist-get p :total) 0) 0))
    (if (equal (plist-get p :state) "indexing")
        (format "indexing %d/%d files%s" (or (plist-get p :indexed) 0) (plist-get p :total)
                (if (> (or (plist-get p :pid) 0) 0) (format " (process %d)" (plist-get p :pid)) ""))
      (format "partial: %d/%d files indexed, then the pass stopped" (or (plist-get p :indexed) 0)
              (plist-get p :total)))))

(defun coderag--read-choice (what names)
  "Read one of NAMES in the minibuffer, the first the default.
NAMES: strings, or an alist keyed by them.  The choices are listed at
once (*Completions*), not only after TAB; the prompt says WHAT is chosen,
how many there are and the default."
  (let ((default (if (consp (car names)) (caar names) (car names))))
    (minibuffer-with-setup-hook #'minibuffer-completion-help
      (completing-read (format "%s (%d choices; RET: %s): " what (length names)
                               (truncate-string-to-width default 60 nil nil "…"))
                       names nil t nil nil default))))

(defun coderag--uri-to-path (uri)
  "The file name of a file URI (or URI itself)."
  (if (string-prefix-p "file://" uri)
      (url-unhex-string (substring uri 7))
    uri))

(defun coderag--citation-file (c)
  "The file of citation C."
  (let ((uri (plist-get c :uri)))
    (if (and uri (stringp uri))
        (coderag--uri-to-path uri)
      (expand-file-name (plist-get c :path) coderag-last-root))))

(defun coderag--citation-label (c)
  "Citation C as path:a-b."
  (let ((a (plist-get c :startLine)) (b (plist-get c :endLine)))
    (if (eql a b)
        (format "%s:%d" (plist-get c :path) a)
      (format "%s:%d-%d" (plist-get c :path) a b))))

(defun coderag--citation-symbol (c)
  "The symbol of citation C, or \"module code\"."
  (let ((s (plist-get c :symbol)))
    (if (and (stringp s) (not (string-empty-p s))) s "module code")))

(defun coderag-visit-location (file start &optional end other-window)
  "Visit FILE at line START and highlight lines START..END."
  (if other-window (find-file-other-window file) (find-file file))
  (goto-char (point-min))
  (forward-line (1- start))
  (let ((beg (point)))
    (save-excursion
      (forward-line (1+ (- (or end start) start)))
      (pulse-momentary-highlight-region beg (point))))
  (recenter))

(defun coderag-jump-to-citation (c &optional other-window)
  "Visit the file of citation C (a plist) and highlight its lines."
  (coderag-visit-location (coderag--citation-file c) (plist-get c :startLine)
                          (plist-get c :endLine) other-window))

(define-button-type 'coderag-citation
  'action (lambda (b) (coderag-jump-to-citation (button-get b 'coderag-citation) t))
  'follow-link t
  'help-echo "mouse-2, RET: visit this citation")

(define-button-type 'coderag-link
  'action (lambda (b)
            (let ((target (button-get b 'coderag-target)))
              (if (car target)
                  (coderag-visit-location (car target) (or (cdr target) 1) nil t)
                (browse-url (button-get b 'coderag-url)))))
  'follow-link t
  'help-echo "mouse-2, RET: open this location")

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

(defun coderag--link-target (url)
  "(FILE . LINE) for a file:// URL (LINE from #L12), or nil."
  (when (string-match "\\`file://\\([^#]*\\)\\(?:#L\\([0-9]+\\)\\)?" url)
    (cons (url-unhex-string (match-string 1 url))
          (and (match-string 2 url) (string-to-number (match-string 2 url))))))

(defconst coderag--inline-re
  (concat "\\(?1:\\(?9:``?\\)\\(?2:[^`\n]+\\)\\9\\)"          ; 2 code, in ` or `` (reST)
          "\\|\\(?3:\\*\\*\\(?4:[^*\n]+\\)\\*\\*\\)"              ; 4 bold
          "\\|\\(?5:\\[\\(?6:[^]\n]+\\)\\](\\(?7:[^)\n]+\\))\\)"     ; 6, 7 link
          "\\|\\(?8:\\[`?\\(?12:[^][ \t\n:`]+\\):\\(?10:[0-9]+\\)"    ; 12, 10 citation
          "\\(?:[-–—]\\(?11:[0-9]+\\)\\)?`?\\]\\)")                  ; 11
  "Inline markdown the renderer knows.")

(defun coderag--insert-inline (s cites)
  "Insert markdown line S with faces and buttons; CITES make citation buttons."
  (let ((pos 0))
    (while (string-match coderag--inline-re s pos)
      (let ((mb (match-beginning 0)) (me (match-end 0))
            (code (match-string 2 s)) (bold (match-string 4 s))
            (ltext (match-string 6 s)) (lurl (match-string 7 s))
            (path (match-string 12 s)) (a (match-string 10 s)) (b (match-string 11 s)))
        (insert (substring s pos mb))
        (cond
         (code (insert (propertize code 'face 'coderag-code-face)))
         (bold (let ((start (point)))
                 (coderag--insert-inline bold cites)
                 (add-face-text-property start (point) 'bold)))
         (ltext (let ((start (point)) (target (coderag--link-target lurl)))
                  (coderag--insert-inline ltext cites)
                  (make-text-button start (point) 'type 'coderag-link
                                    'coderag-target target 'coderag-url lurl
                                    'help-echo (format "RET: open %s" lurl))))
         (path (let* ((a (string-to-number a)) (b (if b (string-to-number b) a))
                      (label (format "[%s]" (substring s (1+ (match-beginning 8)) (1- me))))
                      (i (coderag--find-citation cites path a b))
                      (start (point)))
                 (insert (replace-regexp-in-string "`" "" label))
                 (if i
                     (make-text-button start (point) 'type 'coderag-citation
                                       'coderag-citation (aref cites i))
                   (add-face-text-property start (point) 'coderag-code-face)))))
        (setq pos me)))
    (insert (substring s pos))))

(defun coderag-insert-markdown (text &optional cites face literal-stars)
  "Insert markdown TEXT rendered; citation markers naming CITES become buttons.
FACE, when non-nil, is added to everything inserted.  With LITERAL-STARS,
lines starting with `*' stay as they are (a C comment's ` * ...' lines in a
hover are not a list); `-' and `+' lines are still bullets."
  (let ((start (point)) (fence nil) (cites (or cites [])))
    (dolist (line (split-string (string-trim-right (or text "")) "\n"))
      (cond
       ((string-match-p "\\`[ \t]*```" line) (setq fence (not fence)))
       (fence (insert (propertize line 'face 'coderag-code-face) "\n"))
       ((string-match "\\`\\(#+\\)[ \t]+\\(.*\\)" line)
        (let ((s (point)))
          (coderag--insert-inline (match-string 2 line) cites)
          (add-face-text-property s (point) 'coderag-heading-face)
          (insert "\n")))
       ((and (string-match "\\`\\([ \t]*\\)\\([-*+]\\)[ \t]+\\(.*\\)" line)
             (not (and literal-stars (equal (match-string 2 line) "*"))))
        (insert (match-string 1 line) "• ")
        (coderag--insert-inline (match-string 3 line) cites)
        (insert "\n"))
       (t (coderag--insert-inline line cites) (insert "\n"))))
    (when face (add-face-text-property start (point) face))))

(defun coderag-render-string (markdown)
  "MARKDOWN rendered as a propertized string (for eldoc): a hover, whose
docstring may be a C comment's `*' lines, never bullets."
  (with-temp-buffer
    (coderag-insert-markdown markdown nil nil t)
    (string-trim-right (buffer-string))))

(defun coderag-sorted-context (result)
  "RESULT's context items, highest score first (the order of the scores shown)."
  (sort (append (plist-get result :context) nil)
        (lambda (a b) (> (or (plist-get a :score) 0) (or (plist-get b :score) 0)))))

(defun coderag--insert-context (result)
  "Insert the context RESULT's answer used: score, lines, symbol, via."
  (let ((i 0))
    (mapc (lambda (c)
            (setq i (1+ i))
            (insert (format "%2d. %.2f " i (or (plist-get c :score) 0)))
            (let ((start (point))
                  (cite (list :path (plist-get c :path) :startLine (plist-get c :startLine)
                              :endLine (plist-get c :endLine))))
              (insert (coderag--citation-label c))
              (make-text-button start (point) 'type 'coderag-citation 'coderag-citation cite))
            (insert "  " (coderag--citation-symbol c)
                    (let ((via (plist-get c :via)))
                      (if (and via (> (length via) 0))
                          (concat "  via " (mapconcat #'identity via "+"))
                        ""))
                    "\n"))
          (coderag-sorted-context result))))

(defun coderag-server-pick-p (c)
  "Whether citation C is the server's pick: origin \"fallback\" (the LLM cited
nothing that passed the checks, so the server cited its best context).  An
extractive answer's citations (origin \"extractive\") are cited in its own
text.  Older servers send no origin: source \"auto\"."
  (let ((origin (plist-get c :origin)))
    (if (stringp origin)
        (equal origin "fallback")
      (equal (plist-get c :source) "auto"))))

(defun coderag-citations-heading (cites)
  "The heading of the citation list CITES: verified ones, and the server's picks
\(`coderag-server-pick-p')."
  (let* ((n (length cites))
         (auto (cl-count-if #'coderag-server-pick-p cites)))
    (cond ((= auto 0) (format "Citations (%d, verified)" n))
          ((= auto n) (format "Citations (%d, the server's pick: the answer cited nothing)" n))
          (t (format "Citations (%d verified, %d the server's pick)" (- n auto) auto)))))

(defun coderag-render-answer (view)
  "Insert VIEW: (:question Q :result R :pending P :show-context B).
Without a result, P (:message :text :cancelled :error) is shown as progress
with the streamed, provisional text."
  (let* ((question (plist-get view :question))
         (result (plist-get view :result))
         (p (plist-get view :pending)))
    (insert (propertize question 'face 'coderag-heading-face) "\n\n")
    (if (not result)
        (progn
          (insert (cond ((plist-get p :error) (propertize (plist-get p :error) 'face 'error))
                        ((plist-get p :cancelled) (propertize "Cancelled." 'face 'warning))
                        (t (propertize (format "… %s  (C-c C-k cancels)" (or (plist-get p :message) "asking"))
                                       'face 'coderag-progress-face)))
                  "\n")
          (let ((text (plist-get p :text)))
            (when (and text (not (string-empty-p text)))
              (insert "\n" (propertize "Provisional — not yet verified:" 'face 'coderag-provisional-face) "\n")
              (coderag-insert-markdown text nil 'coderag-provisional-face))))
      (let ((cites (or (plist-get result :citations) []))
            (match (plist-get result :match))
            (start (point)))
        (when (eq (plist-get result :indexing) t)
          ;; said first: the answer below comes from part of the workspace
          (insert (propertize (concat "The index is still being built: this answer comes from the files"
                                      " indexed so far.  It is asked again when indexing ends.")
                              'face 'warning)
                  "\n\n")
          (setq start (point)))
        (let ((partial (coderag-partial-index-text (plist-get result :partialIndex))))
          (when partial
            (insert (propertize (format "The index is not whole (%s): this answer may miss code." partial)
                                'face 'warning)
                    "\n\n")
            (setq start (point))))
        (coderag-insert-markdown (plist-get result :answer) cites)
        (when (member match '("weak" "none"))
          (save-excursion
            (goto-char start)
            (add-face-text-property start (line-end-position) 'coderag-warning-face)))
        (insert "\n" (propertize (coderag-citations-heading cites) 'face 'bold) "\n")
        (let ((i 0))
          (mapc (lambda (c)
                  (setq i (1+ i))
                  (insert (format "%2d. " i))
                  (insert-text-button (coderag--citation-label c)
                                      'type 'coderag-citation 'coderag-citation c)
                  (insert "  " (coderag--citation-symbol c)
                          (if (coderag-server-pick-p c)
                              (propertize "  (the server's pick: the answer cited nothing)" 'face 'shadow)
                            "")
                          "\n"))
                cites))
        (let ((rejected (plist-get result :rejected)))
          (when (and rejected (> (length rejected) 0))
            (insert "\n" (propertize "Rejected citations (removed from the answer)" 'face 'bold) "\n")
            (mapc (lambda (r)
                    (insert "- " (propertize (plist-get r :text) 'face 'coderag-rejected-face)
                            " — " (plist-get r :reason) "\n"))
                  rejected)))
        (when (plist-get view :show-context)
          (insert "\n" (propertize "Context the answer used (score, lines, symbol, via)" 'face 'bold) "\n")
          (coderag--insert-context result))))))

(provide 'coderag-render)
;;; coderag-render.el ends here
