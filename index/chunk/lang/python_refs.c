/* python_refs.c - Python names, docstrings and references (imports,
 * calls, bases, raises) for the chunker in python.c. */
#include "python_int.h"

#include <stdlib.h>

/* ---------------------------------------------------------------- text helpers */

void idx_py_add_text(ChunkRun *r, StrBuf *sb, TSNode n)
{
    uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
    if (b > r->len) b = r->len;
    if (a < b) sb_add(sb, r->src + a, b - a);
}

/* Text of a dotted_name without whitespace or line continuations. */
static char *idx_py_dotted_text(ChunkRun *r, TSNode n)
{
    uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
    sb_reset(&r->sb2);
    for (uint32_t i = a; i < b && i < r->len; i++)
        if (!py_is_space(r->src[i]) && r->src[i] != '\\') sb_addc(&r->sb2, r->src[i]);
    return xstrndup(r->sb2.buf, r->sb2.len);
}

/* Whether n is a call of `super` (`super()`, `super(C, self)`). */
static int idx_py_is_super(ChunkRun *r, TSNode n)
{
    if (ts_node_is_null(n) || ts_node_symbol(n) != r->sy->call) return 0;
    TSNode f = ts_node_child_by_field_id(n, r->sy->f_function);
    if (ts_node_is_null(f) || ts_node_symbol(f) != r->sy->identifier) return 0;
    uint32_t a = ts_node_start_byte(f), b = ts_node_end_byte(f);
    return b - a == 5 && b <= r->len && !memcmp(r->src + a, "super", 5);
}

static void idx_py_string_content(ChunkRun *r, TSNode str, StrBuf *sb);

/* The class a call `cast(X, v)` (`t.cast`, `typing.cast`; X a name or a
 * string) casts to, its first argument; a null node for any other call. */
static TSNode idx_py_cast_class(ChunkRun *r, TSNode call, TSNode f)
{
    const ChunkSyms *sy = r->sy;
    TSNode none = {0};
    if (!idx_py_text_is(r, f, "cast") && !idx_py_text_is(r, f, "t.cast") &&
        !idx_py_text_is(r, f, "typing.cast"))
        return none;
    TSNode args = ts_node_child_by_field_id(call, sy->f_arguments);
    TSNode x = ts_node_is_null(args) || !ts_node_named_child_count(args)
                   ? none
                   : ts_node_named_child(args, 0);
    if (ts_node_is_null(x)) return none;
    TSSymbol s = ts_node_symbol(x);
    return s == sy->string || s == sy->identifier || s == sy->attribute ? x : none;
}

/* A chain longer than this (links, or bytes of its text) names nothing a
 * definition could match: it is no chain. Bounds the cost per attribute
 * node, which every link of `a.b.b.b...` is: without it a line of n links
 * costs n^2 (docs/hardening.md, per-file bounds). */
#define PY_CHAIN_MAX_LINKS 16
#define PY_CHAIN_MAX_BYTES 4096

/* Writes a callee/base expression as a name chain into r->sb ("a.b.c"; the
 * result of a call in the receiver is written as the call, "a.f().b", up to
 * a few calls deep; a receiver that is not a plain chain becomes "?",
 * `super()` stays). 0 when n is no chain (or one past the bounds above). */
static int idx_py_chain(ChunkRun *r, TSNode n)
{
    const ChunkSyms *sy = r->sy;
    TSSymbol s = ts_node_symbol(n);
    size_t depth = 0;
    int calls = 0;
    TSNode cast = {0};
    sb_reset(&r->sb);
    if (s != sy->identifier && s != sy->attribute) return 0;
    for (;;) {
        while (ts_node_symbol(n) == sy->attribute) {
            TSNode a = ts_node_child_by_field_id(n, sy->f_attribute);
            if (ts_node_is_null(a) || ts_node_start_byte(a) == ts_node_end_byte(a)) return 0;
            if (depth >= PY_CHAIN_MAX_LINKS) return 0;
            ARRAY_GROW(r->chain, depth + 1, r->cap_chain);
            r->chain[depth++] = a;
            n = ts_node_child_by_field_id(n, sy->f_object);
            if (ts_node_is_null(n)) break;
        }
        /* `f(...).m`: f's result (a null node in the chain marks the call) */
        if (ts_node_is_null(n) || !depth || ts_node_symbol(n) != sy->call || calls == 3 ||
            idx_py_is_super(r, n))
            break;
        TSNode f = ts_node_child_by_field_id(n, sy->f_function);
        if (ts_node_is_null(f) ||
            (ts_node_symbol(f) != sy->identifier && ts_node_symbol(f) != sy->attribute))
            break;
        if (!ts_node_is_null(cast = idx_py_cast_class(r, n, f))) break;
        ARRAY_GROW(r->chain, depth + 1, r->cap_chain);
        r->chain[depth++] = (TSNode){0};
        calls++;
        n = f;
    }
    if (!ts_node_is_null(cast)) {
        /* `cast(X, v).m`: an X's m, as `X().m` */
        if (ts_node_symbol(cast) == sy->string)
            idx_py_string_content(r, cast, &r->sb);
        else
            idx_py_add_text(r, &r->sb, cast);
        if (!idx_py_is_chain(r->sb.buf, r->sb.len)) return 0;
        sb_adds(&r->sb, "()");
    } else if (!ts_node_is_null(n) && ts_node_symbol(n) == sy->identifier) {
        if (ts_node_start_byte(n) == ts_node_end_byte(n)) return 0;
        idx_py_add_text(r, &r->sb, n);
    } else if (depth && idx_py_is_super(r, n)) {
        /* the enclosing class's bases (graph_types.c): "super()" */
        sb_add(&r->sb, IDX_REF_SUPER, IDX_REF_SUPER_LEN - 1);
    } else {
        sb_addc(&r->sb, '?');
    }
    while (depth > 0) {
        TSNode a = r->chain[--depth];
        if (ts_node_is_null(a)) {
            sb_adds(&r->sb, "()");
            continue;
        }
        sb_addc(&r->sb, '.');
        idx_py_add_text(r, &r->sb, a);
        if (r->sb.len > PY_CHAIN_MAX_BYTES) return 0;
    }
    return r->sb.len <= PY_CHAIN_MAX_BYTES;
}

/* Appends the content of a string node (no prefix, no quotes). */
static void idx_py_string_content(ChunkRun *r, TSNode str, StrBuf *sb)
{
    TSTreeCursor *c = &r->aux2;
    uint32_t a = ts_node_start_byte(str), b = ts_node_end_byte(str);
    ts_tree_cursor_reset(c, str);
    if (ts_tree_cursor_goto_first_child(c)) {
        a = ts_node_end_byte(ts_tree_cursor_current_node(c)); /* after string_start */
        TSNode last = ts_tree_cursor_current_node(c);
        while (ts_tree_cursor_goto_next_sibling(c))
            last = ts_tree_cursor_current_node(c);
        if (ts_node_start_byte(last) >= a) b = ts_node_start_byte(last); /* before string_end */
    }
    if (b > r->len) b = r->len;
    if (a < b) sb_add(sb, r->src + a, b - a);
}

/* Docstring of a body (block or module): its first statement when that is a
 * lone string expression. Caller frees. */
char *idx_py_docstring(ChunkRun *r, TSNode body, uint32_t *out_line)
{
    const ChunkSyms *sy = r->sy;
    TSTreeCursor *c = &r->aux;
    TSNode stmt = {0}, str = {0};
    int found = 0, n_named = 0;
    if (ts_node_is_null(body)) return NULL;
    ts_tree_cursor_reset(c, body);
    if (!ts_tree_cursor_goto_first_child(c)) return NULL;
    do {
        TSNode n = ts_tree_cursor_current_node(c);
        if (ts_node_is_named(n) && ts_node_symbol(n) != sy->comment) {
            stmt = n;
            found = 1;
            break;
        }
    } while (ts_tree_cursor_goto_next_sibling(c));
    if (!found || ts_node_symbol(stmt) != sy->expression_statement) return NULL;
    ts_tree_cursor_reset(c, stmt);
    if (!ts_tree_cursor_goto_first_child(c)) return NULL;
    do {
        TSNode n = ts_tree_cursor_current_node(c);
        if (ts_node_is_named(n) && ts_node_symbol(n) != sy->comment) {
            str = n;
            n_named++;
        }
    } while (ts_tree_cursor_goto_next_sibling(c));
    if (n_named != 1) return NULL;
    while (ts_node_symbol(str) == sy->parenthesized_expression &&
           ts_node_named_child_count(str) == 1)
        str = ts_node_named_child(str, 0);
    TSSymbol s = ts_node_symbol(str);
    sb_reset(&r->sb);
    if (s == sy->string) {
        idx_py_string_content(r, str, &r->sb);
    } else if (s == sy->concatenated_string) {
        ts_tree_cursor_reset(c, str);
        if (ts_tree_cursor_goto_first_child(c)) {
            do {
                TSNode n = ts_tree_cursor_current_node(c);
                if (ts_node_symbol(n) == sy->string) idx_py_string_content(r, n, &r->sb);
            } while (ts_tree_cursor_goto_next_sibling(c));
        }
    } else {
        return NULL;
    }
    const char *p = r->sb.buf, *e = r->sb.buf + r->sb.len;
    while (p < e && py_is_space(*p))
        p++;
    while (e > p && py_is_space(e[-1]))
        e--;
    if (out_line) *out_line = py_node_line(stmt);
    return xstrndup(p, (size_t)(e - p));
}

/* ---------------------------------------------------------------- references */

ChunkRef *idx_py_ref_push(ChunkRun *r, RefKind kind, int unit, TSNode at)
{
    ARRAY_GROW(r->refs, r->n_refs + 1, r->cap_refs);
    ChunkRef *ref = &r->refs[r->n_refs++];
    memset(ref, 0, sizeof *ref);
    ref->kind = kind;
    ref->chunk = unit;
    ref->line = py_node_line(at);
    return ref;
}

/* A REF_CALL/INHERIT/RAISE for a name chain; nothing for other expressions. */
void idx_py_ref_chain(ChunkRun *r, RefKind kind, int unit, TSNode n)
{
    if (ts_node_is_null(n) || !idx_py_chain(r, n)) return;
    idx_py_ref_push(r, kind, unit, n)->name = xstrndup(r->sb.buf, r->sb.len);
}

void idx_py_ref_attr_read(ChunkRun *r, TSNode attr, int written, int unit)
{
    const ChunkSyms *sy = r->sy;
    TSNode obj = ts_node_child_by_field_id(attr, sy->f_object);
    TSNode at = ts_node_child_by_field_id(attr, sy->f_attribute);
    if (ts_node_is_null(obj) || ts_node_is_null(at)) return;
    uint32_t a = ts_node_start_byte(obj), b = ts_node_end_byte(obj);
    int self = ts_node_symbol(obj) == sy->identifier && b - a == 4 && b <= r->len &&
               !memcmp(r->src + a, "self", 4);
    if (self) {
        sb_reset(&r->sb);
        sb_adds(&r->sb, IDX_REF_CLASS);
        idx_py_add_text(r, &r->sb, at);
    } else if (!idx_py_chain(r, attr) || r->sb.buf[0] == '?') {
        return;
    }
    StrBuf name;
    sb_init(&name);
    if (!self) sb_adds(&name, IDX_PY_READ);
    sb_add(&name, r->sb.buf, r->sb.len);
    idx_py_ref_push(r, REF_CALL, unit, attr)->name = sb_detach(&name, NULL);
}

static void chunk__ref_import_name(ChunkRun *r, TSNode n, int from, int level, const char *module)
{
    const ChunkSyms *sy = r->sy;
    TSSymbol s = ts_node_symbol(n);
    char *name = NULL, *alias = NULL;
    if (s == sy->dotted_name) {
        name = idx_py_dotted_text(r, n);
        alias = from ? xstrdup(name) : xstrndup(name, strcspn(name, "."));
    } else if (s == sy->aliased_import) {
        TSNode nm = ts_node_child_by_field_id(n, sy->f_name);
        TSNode al = ts_node_child_by_field_id(n, sy->f_alias);
        if (ts_node_is_null(nm) || ts_node_is_null(al)) return;
        name = idx_py_dotted_text(r, nm);
        sb_reset(&r->sb);
        idx_py_add_text(r, &r->sb, al);
        alias = xstrndup(r->sb.buf, r->sb.len);
    } else {
        return;
    }
    if (!*name || !*alias) {
        free(name);
        free(alias);
        return;
    }
    ChunkRef *ref = idx_py_ref_push(r, REF_IMPORT, -1, n);
    ref->level = level;
    ref->alias = alias;
    if (from) {
        ref->module = xstrdup(module);
        ref->member = name;
    } else {
        ref->module = name;
    }
}

void idx_py_ref_import(ChunkRun *r, TSNode n)
{
    const ChunkSyms *sy = r->sy;
    TSSymbol s = ts_node_symbol(n);
    int from = s != sy->import_statement, level = 0, have_module = s == sy->future_import_statement;
    char *module = xstrdup(have_module ? "__future__" : "");
    TSTreeCursor *c = &r->aux;
    ts_tree_cursor_reset(c, n);
    if (!ts_tree_cursor_goto_first_child(c)) goto out;
    do {
        TSNode ch = ts_tree_cursor_current_node(c);
        TSFieldId f = ts_tree_cursor_current_field_id(c);
        TSSymbol cs = ts_node_symbol(ch);
        if (f == sy->f_module_name && s == sy->import_from_statement) {
            have_module = 1;
            if (cs == sy->dotted_name) {
                free(module);
                module = idx_py_dotted_text(r, ch);
            } else if (cs == sy->relative_import) {
                TSTreeCursor *c2 = &r->aux2;
                ts_tree_cursor_reset(c2, ch);
                if (!ts_tree_cursor_goto_first_child(c2)) continue;
                do {
                    TSNode g = ts_tree_cursor_current_node(c2);
                    if (ts_node_symbol(g) == sy->import_prefix) {
                        for (uint32_t i = ts_node_start_byte(g); i < ts_node_end_byte(g); i++)
                            level += r->src[i] == '.';
                    } else if (ts_node_symbol(g) == sy->dotted_name) {
                        free(module);
                        module = idx_py_dotted_text(r, g);
                    }
                } while (ts_tree_cursor_goto_next_sibling(c2));
            }
        } else if (f == sy->f_name) {
            if (from && !have_module) continue;
            chunk__ref_import_name(r, ch, from, level, module);
        } else if (cs == sy->wildcard_import && have_module) {
            ChunkRef *ref = idx_py_ref_push(r, REF_IMPORT, -1, ch);
            ref->level = level;
            ref->module = xstrdup(module);
            ref->member = xstrdup("*");
            ref->alias = xstrdup("*");
        }
    } while (ts_tree_cursor_goto_next_sibling(c));
out:
    free(module);
}

void idx_py_ref_bases(ChunkRun *r, TSNode cls, int unit)
{
    const ChunkSyms *sy = r->sy;
    TSNode args = ts_node_child_by_field_id(cls, sy->f_superclasses);
    TSTreeCursor *c = &r->aux;
    if (ts_node_is_null(args)) return;
    ts_tree_cursor_reset(c, args);
    if (!ts_tree_cursor_goto_first_child(c)) return;
    do {
        TSNode n = ts_tree_cursor_current_node(c);
        TSSymbol s = ts_node_symbol(n);
        if (s == sy->subscript) n = ts_node_child_by_field_id(n, sy->f_value); /* Generic[T] */
        idx_py_ref_chain(r, REF_INHERIT, unit, n);
    } while (ts_tree_cursor_goto_next_sibling(c));
}

/* except X / except (X, Y) / except X as e. */
void idx_py_ref_caught(ChunkRun *r, TSNode v)
{
    const ChunkSyms *sy = r->sy;
    if (ts_node_is_null(v)) return;
    if (ts_node_symbol(v) == sy->as_pattern) v = ts_node_named_child(v, 0);
    while (!ts_node_is_null(v) && ts_node_symbol(v) == sy->parenthesized_expression)
        v = ts_node_named_child(v, 0);
    if (ts_node_is_null(v)) return;
    if (ts_node_symbol(v) != sy->tuple) {
        idx_py_ref_chain(r, REF_RAISE, -1, v);
        return;
    }
    TSTreeCursor *c = &r->aux;
    ts_tree_cursor_reset(c, v);
    if (!ts_tree_cursor_goto_first_child(c)) return;
    do {
        idx_py_ref_chain(r, REF_RAISE, -1, ts_tree_cursor_current_node(c));
    } while (ts_tree_cursor_goto_next_sibling(c));
}

void idx_py_ref_raise(ChunkRun *r, TSNode n)
{
    const ChunkSyms *sy = r->sy;
    TSTreeCursor *c = &r->aux;
    ts_tree_cursor_reset(c, n);
    if (!ts_tree_cursor_goto_first_child(c)) return;
    do {
        TSNode ch = ts_tree_cursor_current_node(c);
        if (!ts_node_is_named(ch) || ts_node_symbol(ch) == sy->comment) continue;
        if (ts_tree_cursor_current_field_id(c) == sy->f_cause) continue;
        idx_py_ref_chain(r, REF_RAISE, -1, ch);
        return;
    } while (ts_tree_cursor_goto_next_sibling(c));
}
