/* python_annot.c - Python annotations read as the class they name an
 * instance of (`Optional[X]` -> X), what a function returns, and whether a
 * method is a property, for the typed receivers of python_types.c. */
#include "python_int.h"

#include <stdlib.h>

static int ident_char(char c)
{
    return c == '_' || (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z') ||
           (unsigned char)c >= 0x80;
}

/* Whether s[0..n) is a dotted name chain ("a", "a.B"). */
int idx_py_is_chain(const char *s, size_t n)
{
    if (!n || s[0] == '.' || s[n - 1] == '.' || (s[0] >= '0' && s[0] <= '9')) return 0;
    for (size_t i = 0; i < n; i++)
        if (!ident_char(s[i]) && !(s[i] == '.' && s[i + 1] != '.')) return 0;
    return 1;
}

/* Whether s[0..n) starts with wrapper (last part of a dotted name: "Optional",
 * "t.Optional", "typing.Optional") followed by '['. */
static size_t wrapped(const char *s, size_t n, const char *wrapper)
{
    size_t w = strlen(wrapper);
    for (size_t i = 0; i + w < n; i++) {
        if (s[i] == '[') return 0;
        if ((i == 0 || s[i - 1] == '.') && !memcmp(s + i, wrapper, w) && s[i + w] == '[')
            return i + w + 1;
    }
    return 0;
}

/* The class an annotation (whitespace removed) names an instance of, into
 * out: `X`, `"X"`, `Optional[X]`, `X | None`, `Union[X, None]`, `Final[X]`,
 * `ClassVar[X]`; "@X" for `Type[X]` (the class itself). 0 for anything
 * else (containers, callables). */
int idx_py_annotation_type(const char *s, size_t n, StrBuf *out)
{
    for (int guard = 0; guard < 4; guard++) {
        while (n >= 2 && (s[0] == '"' || s[0] == '\'') && s[n - 1] == s[0])
            s++, n -= 2;
        if (n > 5 && !memcmp(s + n - 5, "|None", 5))
            n -= 5;
        else if (n > 5 && !memcmp(s, "None|", 5))
            s += 5, n -= 5;
        size_t k = 0;
        static const char *const wrappers[] = {"Optional", "Final", "ClassVar", "Union"};
        for (size_t w = 0; w < 4 && !k; w++)
            if ((k = wrapped(s, n, wrappers[w])) != 0 && s[n - 1] == ']') {
                s += k;
                n -= k + 1;
                if (w == 3) { /* Union[X, None] */
                    if (n > 5 && !memcmp(s + n - 5, ",None", 5))
                        n -= 5;
                    else if (n > 5 && !memcmp(s, "None,", 5))
                        s += 5, n -= 5;
                    else
                        return 0;
                }
            } else {
                k = 0;
            }
        if (!k) break;
    }
    /* a generic class (`t.Match[str]`, `list[int]`): the class */
    size_t open = 0;
    while (open < n && s[open] != '[')
        open++;
    size_t whole = n;
    if (open < n && s[n - 1] == ']') n = open;
    if (!idx_py_is_chain(s, n) || (n == 4 && !memcmp(s, "None", 4))) return 0;
    /* Type[X] is the class X itself, not an instance: "@X" */
    if (n >= 4 && (!memcmp(s + n - 4, "Type", 4) || !memcmp(s + n - 4, "type", 4)) &&
        (n == 4 || s[n - 5] == '.')) {
        if (n == whole || !idx_py_annotation_type(s + n + 1, whole - n - 2, out) ||
            out->buf[0] == '@')
            return 0;
        char *x = xstrndup(out->buf, out->len);
        sb_reset(out);
        sb_addc(out, '@');
        sb_adds(out, x);
        free(x);
        return 1;
    }
    sb_reset(out);
    sb_add(out, s, n);
    return 1;
}

/* s..n without the quotes of a string annotation ("X" or 'X'). */
static void unquote(const char **s, size_t *n)
{
    while (*n >= 2 && ((*s)[0] == '"' || (*s)[0] == '\'') && (*s)[*n - 1] == (*s)[0])
        (*s)++, *n -= 2;
}

/* Whether s..n (unquoted) is `Name[...]` (Name possibly dotted) with Name's
 * last part one of names: then *open is the index of its '['. */
static int generic_of(const char **s, size_t *n, const char *const *names, size_t n_names,
                      size_t *open)
{
    unquote(s, n);
    size_t o = 0;
    while (o < *n && (*s)[o] != '[')
        o++;
    if (o == *n || (*s)[*n - 1] != ']' || !idx_py_is_chain(*s, o)) return 0;
    size_t last = o;
    while (last > 0 && (*s)[last - 1] != '.')
        last--;
    *open = o;
    for (size_t i = 0; i < n_names; i++)
        if (strlen(names[i]) == o - last && !memcmp(*s + last, names[i], o - last)) return 1;
    return 0;
}

/* The chain in..k (unquoted) into out: 1, or 0 when it is not one. */
static int chain_to(const char *in, size_t k, StrBuf *out)
{
    unquote(&in, &k);
    if (!idx_py_is_chain(in, k)) return 0;
    sb_reset(out);
    sb_add(out, in, k);
    return 1;
}

/* The item class of a container annotation (`t.Iterable[X]`, `list["X"]`),
 * into out; 0 for none. */
int idx_py_annotation_item(const char *s, size_t n, StrBuf *out)
{
    static const char *const containers[] = {
        "Iterable",        "Iterator",    "List",  "list",      "Sequence",
        "MutableSequence", "Set",         "set",   "FrozenSet", "frozenset",
        "Collection",      "AbstractSet", "Deque", "deque",     "Reversible"};
    /* generators: the first argument is what they yield */
    static const char *const generators[] = {"Generator", "AsyncGenerator", "AsyncIterator",
                                             "AsyncIterable"};
    size_t open;
    if (generic_of(&s, &n, generators, sizeof generators / sizeof *generators, &open)) {
        size_t comma = open + 1;
        for (int depth = 0; comma < n - 1 && (depth || s[comma] != ','); comma++)
            depth += s[comma] == '[' ? 1 : s[comma] == ']' ? -1 : 0;
        return chain_to(s + open + 1, comma - open - 1, out);
    }
    if (!generic_of(&s, &n, containers, sizeof containers / sizeof *containers, &open)) return 0;
    return chain_to(s + open + 1, n - open - 2, out);
}

int idx_py_annotation_value(const char *s, size_t n, StrBuf *out)
{
    static const char *const mappings[] = {
        "Dict", "dict", "Mapping", "MutableMapping", "DefaultDict", "defaultdict", "OrderedDict"};
    size_t open;
    if (!generic_of(&s, &n, mappings, sizeof mappings / sizeof *mappings, &open)) return 0;
    /* the second argument: after the first comma outside brackets */
    size_t comma = open + 1;
    for (int depth = 0; comma < n - 1 && (depth || s[comma] != ','); comma++)
        depth += s[comma] == '[' ? 1 : s[comma] == ']' ? -1 : 0;
    if (comma >= n - 1) return 0;
    return chain_to(s + comma + 1, n - comma - 2, out);
}

/* The text of a node with whitespace and line continuations dropped. */
void idx_py_squeezed(ChunkRun *r, TSNode n, StrBuf *out)
{
    uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
    sb_reset(out);
    for (uint32_t i = a; i < b && i < r->len; i++)
        if (!py_is_space(r->src[i]) && r->src[i] != '\\') sb_addc(out, r->src[i]);
}

TSNode idx_py_first_named(const ChunkRun *r, TSNode n)
{
    uint32_t k = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < k; i++) {
        TSNode ch = ts_node_named_child(n, i);
        if (ts_node_symbol(ch) != r->sy->comment) return ch;
    }
    return (TSNode){0};
}

int idx_py_text_is(ChunkRun *r, TSNode v, const char *want)
{
    uint32_t a = ts_node_start_byte(v), b = ts_node_end_byte(v);
    return b - a == strlen(want) && b <= r->len && !memcmp(r->src + a, want, b - a);
}

/* Whether a method's body (not its nested definitions) returns `self`,
 * `cls(...)`, `self.__class__(...)` or `type(self)(...)`. */
static int returns_own_instance(ChunkRun *r, TSNode body)
{
    const ChunkSyms *sy = r->sy;
    TSTreeCursor cur = ts_tree_cursor_new(body);
    size_t depth = 0;
    int descend = 1, found = 0;
    while (!found && idx_ts_walk_next(&cur, &depth, descend)) {
        TSNode c = ts_tree_cursor_current_node(&cur);
        TSSymbol s = ts_node_symbol(c);
        /* a return is a statement: never inside an expression's subtree */
        descend = s != sy->function_definition && s != sy->class_definition &&
                  s != sy->expression_statement && s != sy->return_statement &&
                  s != sy->raise_statement;
        if (s != sy->return_statement) continue;
        TSNode v = idx_py_first_named(r, c);
        int call = !ts_node_is_null(v) && ts_node_symbol(v) == sy->call;
        if (call) v = ts_node_child_by_field_id(v, sy->f_function);
        if (ts_node_is_null(v)) continue;
        if (call && (ts_node_symbol(v) == sy->attribute || ts_node_symbol(v) == sy->call)) {
            found = idx_py_text_is(r, v, "self.__class__") || idx_py_text_is(r, v, "type(self)");
            continue;
        }
        if (ts_node_symbol(v) != sy->identifier) continue;
        found = idx_py_text_is(r, v, call ? "cls" : "self");
    }
    ts_tree_cursor_delete(&cur);
    return found;
}

/* Whether the text of body has a `return` followed by what
 * returns_own_instance looks for at the start of its value (`self`, `cls`,
 * `type`): without one, no return of the body returns its own instance,
 * and its tree need not be walked. */
static int may_return_own(ChunkRun *r, TSNode body)
{
    uint32_t a = ts_node_start_byte(body), b = ts_node_end_byte(body);
    if (b > r->len) b = (uint32_t)r->len;
    static const char kw[] = "return";
    const size_t kn = sizeof kw - 1;
    for (uint32_t i = a; i + kn <= b; i++) {
        const char *p = memchr(r->src + i, 'r', b - i);
        if (!p) return 0;
        i = (uint32_t)(p - r->src);
        if (i + kn > b || memcmp(p, kw, kn) != 0) continue;
        uint32_t j = i + (uint32_t)kn;
        while (j < b && (py_is_space(r->src[j]) || r->src[j] == '\\'))
            j++;
        const char *v = r->src + j;
        size_t left = b - j;
        if ((left >= 4 && (!memcmp(v, "self", 4) || !memcmp(v, "type", 4))) ||
            (left >= 3 && !memcmp(v, "cls", 3)))
            return 1;
    }
    return 0;
}

int idx_py_return_type(ChunkRun *r, const ChunkUnit *u, StrBuf *out)
{
    if (u->kind != IDX_KIND_FUNCTION && u->kind != IDX_KIND_METHOD) return 0;
    const char *cls =
        u->kind == IDX_KIND_METHOD && u->parent >= 0 ? r->units[u->parent].symbol : NULL;
    TSNode rt = ts_node_child_by_field_id(u->def, r->sy->f_return_type);
    if (ts_node_is_null(rt)) {
        TSNode body = ts_node_child_by_field_id(u->def, r->sy->f_body);
        if (!cls || ts_node_is_null(body) || !may_return_own(r, body) ||
            !returns_own_instance(r, body))
            return 0;
        sb_reset(out);
        sb_adds(out, cls);
        return 1;
    }
    StrBuf raw;
    sb_init(&raw);
    idx_py_squeezed(r, rt, &raw);
    int ok = idx_py_annotation_type(raw.buf ? raw.buf : "", raw.len, out) && out->buf[0] != '@';
    sb_release(&raw);
    /* `-> Self`, `-> t.Self`: the class the method is of */
    if (ok && out->len >= 4 && !memcmp(out->buf + out->len - 4, "Self", 4) &&
        (out->len == 4 || out->buf[out->len - 5] == '.')) {
        if (!cls) return 0;
        sb_reset(out);
        sb_adds(out, cls);
    }
    return ok;
}

int idx_py_return_items(ChunkRun *r, const ChunkUnit *u, StrBuf *out)
{
    if (u->kind != IDX_KIND_FUNCTION && u->kind != IDX_KIND_METHOD) return 0;
    TSNode rt = ts_node_child_by_field_id(u->def, r->sy->f_return_type);
    if (ts_node_is_null(rt)) return 0;
    StrBuf raw;
    sb_init(&raw);
    idx_py_squeezed(r, rt, &raw);
    int ok = idx_py_annotation_item(raw.buf ? raw.buf : "", raw.len, out);
    sb_release(&raw);
    return ok;
}

/* Whether unit u's definition has a decorator whose name ends in "property"
 * (`property`, `cached_property`, `functools.cached_property`). */
int idx_py_is_property(ChunkRun *r, const ChunkUnit *u)
{
    TSNode dd = u->outer;
    if (ts_node_is_null(dd) || ts_node_symbol(dd) != r->sy->decorated_definition) return 0;
    uint32_t k = ts_node_named_child_count(dd);
    for (uint32_t i = 0; i < k; i++) {
        TSNode d = ts_node_named_child(dd, i);
        if (ts_node_symbol(d) != r->sy->decorator) continue;
        TSNode e = idx_py_first_named(r, d);
        if (!ts_node_is_null(e) && ts_node_symbol(e) == r->sy->call)
            e = ts_node_child_by_field_id(e, r->sy->f_function);
        if (ts_node_is_null(e)) continue;
        uint32_t a = ts_node_start_byte(e), b = ts_node_end_byte(e);
        if (b <= r->len && b - a >= 8 && !memcmp(r->src + b - 8, "property", 8)) return 1;
    }
    return 0;
}
