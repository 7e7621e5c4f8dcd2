"""The index's code tokenizer (index/postings/tokens.c, tok_code), byte for byte.

Identifiers are emitted lowercased and whole, then split into their
camelCase / snake_case parts when there is more than one part; numbers are
dropped. Works on UTF-8 bytes with the C locale's ASCII-only character
classes, so the C and Python sides agree on every input
(tests/unit/test_embed_builtin.c checks a fixture made by this module).
"""


def _alpha(c):
    return 65 <= c <= 90 or 97 <= c <= 122


def _digit(c):
    return 48 <= c <= 57


def _upper(c):
    return 65 <= c <= 90


def _lower(c):
    return 97 <= c <= 122


def _ident_start(c):
    return _alpha(c) or c == 95 or c >= 0x80


def _ident_char(c):
    return _alpha(c) or _digit(c) or c == 95 or c >= 0x80


def _parts(s):
    out = []
    i, n = 0, len(s)
    while i < n:
        while i < n and s[i] == 95:
            i += 1
        if i >= n:
            break
        j = i + 1
        c0 = s[i]
        if _digit(c0):
            while j < n and _digit(s[j]):
                j += 1
            i = j
            continue
        if _upper(c0):
            if j < n and _upper(s[j]):
                while j < n and _upper(s[j]):
                    j += 1
                if j < n and _lower(s[j]):
                    j -= 1
            else:
                while j < n and (_lower(s[j]) or s[j] >= 0x80):
                    j += 1
        else:
            while j < n and (_lower(s[j]) or s[j] >= 0x80):
                j += 1
        if j - i >= 2 or _alpha(c0):
            out.append(s[i:j].lower())
        i = j
    return out


def tok_code(text):
    """Tokens (bytes) of text (str or bytes), as tok_code emits them."""
    if isinstance(text, str):
        text = text.encode("utf-8", "surrogatepass")
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if not _ident_start(c):
            if _digit(c):
                while i < n and _ident_char(text[i]):
                    i += 1
            else:
                i += 1
            continue
        j = i + 1
        while j < n and _ident_char(text[j]):
            j += 1
        word = text[i:j]
        parts = _parts(word)
        if len(parts) != 1 or len(parts[0]) != j - i:
            out.append(word.lower())
        out.extend(parts)
        i = j
    return out
