/*
 * chunk_ts.c - the generic chunker: one tree-sitter parse, one pass of the
 * language's query (definitions, references, imports), units nested by byte
 * range (a function inside a container is a method; anything inside a
 * function stays part of it), then the same line ownership as Python's:
 * every line belongs to its innermost unit or to module code, long units
 * are split into windows, comment-only runs are dropped.
 */
#include "chunk_ts_int.h"

#include <stdlib.h>
#include <string.h>

/* How deep a file may nest (docs/hardening.md, "per-file bounds"; real
 * sources stay far below each). Before the parse, brackets open at once:
 * tree-sitter's memory grows by hundreds of bytes per open level. After it,
 * the sum of every node's depth (what a query's `(parent (child))` pattern
 * and a walk up from a node cost between them) at most this many per byte,
 * plus the slack a small file needs; and no node deeper than tree-sitter's
 * query cursor counts in 16 bits (past it its states are never dropped). */
#define TS_NEST_MAX_BRACKETS 2048
#define TS_NEST_PER_BYTE 128
#define TS_NEST_SLACK (16u << 20)
#define TS_NEST_MAX_DEPTH 30000

static const struct {
    const char *name;
    CapKind kind;
} ts__caps[] = {
    {"def.function", CAP_DEF_FUNCTION},
    {"def.method", CAP_DEF_METHOD},
    {"def.class", CAP_DEF_CLASS},
    {"def.impl", CAP_DEF_IMPL},
    {"def.namespace", CAP_DEF_NAMESPACE},
    {"def.type", CAP_DEF_TYPE},
    {"def.macro", CAP_DEF_MACRO},
    {"def.constant", CAP_DEF_CONSTANT},
    {"name", CAP_NAME},
    {"receiver", CAP_RECEIVER},
    {"body", CAP_BODY},
    {"ref.call", CAP_REF_CALL},
    {"ref.type", CAP_REF_TYPE},
    {"ref.inherit", CAP_REF_INHERIT},
    {"import", CAP_IMPORT},
    {"package", CAP_PACKAGE},
    {"ref.from", CAP_REF_FROM},
    {"ref.value", CAP_REF_VALUE},
    {"ref.expand", CAP_REF_EXPAND},
    {"local", CAP_LOCAL},
    {"pp.if", CAP_PP_IF},
    {"pp.define", CAP_PP_DEFINE},
    {"var.name", CAP_VAR_NAME},
    {"var.top", CAP_VAR_TOP},
    {"var.type", CAP_VAR_TYPE},
    {"field.name", CAP_FIELD_NAME},
    {"field.type", CAP_FIELD_TYPE},
    {"result.type", CAP_RESULT_TYPE},
    {"var.elem", CAP_VAR_ELEM},
    {"field.elem", CAP_FIELD_ELEM},
    {"arg.fn", CAP_ARG_FN},
    {"arg.param", CAP_ARG_PARAM},
    {"arg.type", CAP_ARG_TYPE},
    {"arg.callee", CAP_ARG_CALLEE},
    {"arg.name", CAP_ARG_NAME},
    {"interface", CAP_INTERFACE},
    {"store.field", CAP_STORE_FIELD},
    {"store.value", CAP_STORE_VALUE},
    {"ref.args", CAP_REF_ARGS},
    {"ref.writer", CAP_REF_WRITER},
    {"recv.type", CAP_RECV_TYPE},
    {"recv.call", CAP_RECV_CALL},
    {"ref.operand", CAP_REF_OPERAND},
    {"ref.construct", CAP_REF_NEW},
    {"ref.operator", CAP_REF_OP},
    {"var.address", CAP_VAR_ADDR},
};

static int ts__is_def(CapKind k)
{
    return k >= CAP_DEF_FUNCTION && k <= CAP_DEF_CONSTANT;
}

static int ts__is_container(CapKind k)
{
    return k == CAP_DEF_CLASS || k == CAP_DEF_IMPL || k == CAP_DEF_NAMESPACE;
}

static int ts__kind_in(TSNode n, const char *const *kinds)
{
    if (!kinds || ts_node_is_null(n)) return 0;
    const char *t = ts_node_type(n);
    for (size_t i = 0; kinds[i]; i++)
        if (!strcmp(kinds[i], t)) return 1;
    return 0;
}

/* ---------------------------------------------------------------- names */

static int ts__ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '$' || (unsigned char)c >= 0x80;
}

/* Writes the expression src[a,b) as a dotted chain into sb: identifiers
 * joined by '.', '->', '::' or '?.' become "a.b.c" (a first word lang names
 * the object a method runs on becomes IDX_RECEIVER); generic arguments end it;
 * anything else makes the receiver unknown ("?.last"). A leading `::` (the
 * global scope) is IDX_REF_GLOBAL. 0 when there is nothing to name. */
static int ts__chain(StrBuf *sb, const IdxLang *lang, const char *src, uint32_t a, uint32_t b)
{
    uint32_t i = a;
    int ok = 1, want_ident = 1, parts = 0;
    sb_reset(sb);
    while (i < b) {
        char c = src[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            i++;
        } else if (!parts && !sb->len && c == ':' && i + 1 < b && src[i + 1] == ':') {
            i += 2;
            sb_adds(sb, IDX_REF_GLOBAL);
        } else if (want_ident && ts__ident_char(c) && !(c >= '0' && c <= '9')) {
            uint32_t j = i;
            while (j < b && ts__ident_char(src[j]))
                j++;
            if (parts++) sb_addc(sb, '.');
            size_t n = j - i;
            if (parts == 1 && idx_lang_self_word(lang, src + i, n))
                sb_adds(sb, IDX_RECEIVER);
            else
                sb_add(sb, src + i, n);
            i = j;
            want_ident = 0;
        } else if (!want_ident && (c == '.' || (c == '?' && i + 1 < b && src[i + 1] == '.'))) {
            i += c == '?' ? 2 : 1;
            want_ident = 1;
        } else if (!want_ident && i + 1 < b &&
                   ((c == '-' && src[i + 1] == '>') || (c == ':' && src[i + 1] == ':'))) {
            if (c == ':' && i + 2 < b && src[i + 2] == '<')
                break; /* f::<T>(): generic arguments end it, as in Foo<T> */
            i += 2;
            want_ident = 1;
        } else if (!want_ident && c == '<') {
            break; /* Foo<T>: the generic arguments are not part of the name */
        } else if (!want_ident && c == '(' && lang && lang->call_chains) {
            /* a call inside the chain: "a.f().m" (`a.f()->m`), typed by f's
             * result */
            int depth = 0;
            uint32_t j = i;
            for (; j < b; j++) {
                if (src[j] == '(')
                    depth++;
                else if (src[j] == ')' && --depth == 0)
                    break;
            }
            if (j >= b) {
                ok = 0;
                break;
            }
            sb_adds(sb, "()");
            i = j + 1;
            while (i < b && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r'))
                i++;
            if (i >= b || (src[i] != '.' && src[i] != '?' &&
                           !(src[i] == '-' && i + 1 < b && src[i + 1] == '>'))) {
                ok = 0;
                break;
            }
        } else if (!want_ident && c == '!' && lang && lang->call_chains && i + 1 < b &&
                   src[i + 1] == '.') {
            i++; /* TypeScript's non-null assertion: `a!.m()` */
        } else {
            ok = 0;
            break;
        }
    }
    if (ok && !want_ident && parts) return 1;
    /* not a plain chain: keep the last member when it is one */
    uint32_t e = b;
    while (e > a && (src[e - 1] == ' ' || src[e - 1] == '\n' || src[e - 1] == '\t'))
        e--;
    uint32_t s = e;
    while (s > a && ts__ident_char(src[s - 1]))
        s--;
    if (s == e || s == a || (src[s] >= '0' && src[s] <= '9')) return 0;
    if (!(src[s - 1] == '.' || src[s - 1] == '>' || src[s - 1] == ':')) return 0;
    sb_reset(sb);
    sb_adds(sb, "?.");
    sb_add(sb, src + s, e - s);
    return 1;
}

/* ---------------------------------------------------------------- query pass */

/* A macro before a C declaration ("LUA_API lua_Number lua_version (")
 * makes the grammar read the return type as the name and the name as an
 * error: the name is then the like node inside the ERROR right after it. */
static TSNode ts__true_name(TSNode name)
{
    TSNode next = ts_node_next_sibling(name);
    if (ts_node_is_null(next) || strcmp(ts_node_type(next), "ERROR")) return name;
    uint32_t n = ts_node_named_child_count(next);
    if (!n) return name;
    TSNode last = ts_node_named_child(next, n - 1);
    return strcmp(ts_node_type(last), ts_node_type(name)) ? name : last;
}

/* Whether n lies strictly inside outer. */
static int ts__inside(TSNode n, TSNode outer)
{
    return !ts_node_eq(n, outer) && ts_node_start_byte(outer) <= ts_node_start_byte(n) &&
           ts_node_end_byte(n) <= ts_node_end_byte(outer);
}

/* Whether the source before byte a, past blanks, ends in `.` or `:`: the
 * only way the token before a node there can be `.` or `::`. Looking
 * first spares ts_node_prev_sibling (a walk down from the root) for
 * almost every call. */
static int ts__after_dot(const TsRun *r, uint32_t a)
{
    if (a > r->em.len) return 1;
    /* blanks, and a backslash that continues a line: more here only means
     * asking tree-sitter more often */
    while (a > 0 && r->em.src[a - 1] && strchr(" \t\r\n\f\v\\", r->em.src[a - 1]))
        a--;
    return a > 0 && (r->em.src[a - 1] == '.' || r->em.src[a - 1] == ':');
}

/* How many arguments an argument list holds (its named children but
 * comments). */
static int ts__argc(const TsRun *r, TSNode args)
{
    int n = 0;
    uint32_t k = ts_node_named_child_count(args);
    for (uint32_t i = 0; i < k; i++)
        n += !ts__kind_in(ts_node_named_child(args, i), r->lang->comments);
    return n;
}

/* Whether match m holds its pattern's text predicates (`(#eq? @cap
 * "text")`, `(#not-eq? @cap "text")`: the query language's own, which the
 * library leaves to its user); a predicate of another form holds. */
static int ts__predicates_hold(const TsRun *r, const TSQuery *q, const TSQueryMatch *m)
{
    uint32_t n;
    const TSQueryPredicateStep *s = ts_query_predicates_for_pattern(q, m->pattern_index, &n);
    for (uint32_t i = 0, k; i < n; i = k + 1) {
        for (k = i; k < n && s[k].type != TSQueryPredicateStepTypeDone; k++)
            ;
        if (k - i != 3 || s[i].type != TSQueryPredicateStepTypeString ||
            s[i + 1].type != TSQueryPredicateStepTypeCapture ||
            s[i + 2].type != TSQueryPredicateStepTypeString)
            continue;
        uint32_t len, want_len;
        const char *op = ts_query_string_value_for_id(q, s[i].value_id, &len);
        int eq = len == 3 && !memcmp(op, "eq?", 3), neg = len == 7 && !memcmp(op, "not-eq?", 7);
        if (!eq && !neg) continue;
        const char *want = ts_query_string_value_for_id(q, s[i + 2].value_id, &want_len);
        for (uint16_t c = 0; c < m->capture_count; c++) {
            if (m->captures[c].index != s[i + 1].value_id) continue;
            uint32_t a = ts_node_start_byte(m->captures[c].node);
            uint32_t b = ts_node_end_byte(m->captures[c].node);
            int same =
                b <= r->em.len && b - a == want_len && !memcmp(r->em.src + a, want, want_len);
            if (same == neg) return 0;
        }
    }
    return 1;
}

/* An operator applied to a name (@ref.operand, @ref.operator: `a == b`,
 * `s = f()`, `x[i]`, `*it`, `++it`): a call "a.operator==" of the
 * operator its type declares, taking the other operands as arguments (a
 * postfix `it++` one more: C++'s `operator++(int)`). It is typed as a
 * member call is, and dropped where the name's type is not known or is an
 * address (chunk_ts_types.c): a built-in operator calls nothing. */
static void ts__operator_ref(TsRun *r, TSNode operand, TSNode op)
{
    TSNode expr = ts_node_parent(operand);
    uint32_t a = ts_node_start_byte(operand), b = ts_node_end_byte(operand);
    uint32_t oa = ts_node_start_byte(op), ob = ts_node_end_byte(op);
    if (ts_node_is_null(expr) || b > r->em.len || ob > r->em.len || ob <= oa) return;
    int others = (int)ts_node_named_child_count(expr) - 1;
    ChunkRef *ref = idx_emit_ref_push(&r->em, REF_CALL, -1, ts_node_start_point(operand).row + 1);
    sb_reset(&r->sb);
    sb_add(&r->sb, r->em.src + a, b - a);
    sb_adds(&r->sb, ".operator");
    if (r->em.src[oa] == '[') /* a subscript: its brackets */
        sb_adds(&r->sb, "[]");
    else
        sb_add(&r->sb, r->em.src + oa, ob - oa);
    ref->name = xstrndup(r->sb.buf, r->sb.len);
    ref->argc = 1 + (others > 0 ? others : 0) + (!others && oa > a);
    if (others > 0 && r->lang->literal_types) idx_chunk_ts_arg_types(r, ref, expr, operand);
}

/* The query pass. Each definition and reference it keeps is counted in
 * work as it comes: past the file's budget the pass stops, CR_ETIMEOUT. */
static CrErr ts__collect(TsRun *r, const TSQuery *q, TSNode root, ChunkSet *out, IdxTsWork *work,
                         ErrInfo *e)
{
    CrErr rc = CR_OK;
    size_t seen_refs = 0, seen_defs = 0;
    uint32_t n_caps = ts_query_capture_count(q);
    CapKind *kinds = xcalloc(n_caps + 1, sizeof *kinds);
    for (uint32_t i = 0; i < n_caps; i++) {
        uint32_t len;
        const char *nm = ts_query_capture_name_for_id(q, i, &len);
        for (size_t k = 0; k < sizeof ts__caps / sizeof ts__caps[0]; k++)
            if (strlen(ts__caps[k].name) == len && !memcmp(ts__caps[k].name, nm, len))
                kinds[i] = ts__caps[k].kind;
    }
    LangParse lp = {r->em.src, r->em.len, r};
    TSQueryCursor *qc = ts_query_cursor_new();
    ts_query_cursor_exec(qc, q, root);
    TSQueryMatch m;
    while (ts_query_cursor_next_match(qc, &m)) {
        size_t refs = r->em.n_refs + r->n_types + r->n_typed + r->n_locals;
        if ((rc = idx_ts_work_add(work, refs - seen_refs, IDX_TS_WORK_REF, "its references", e)) ||
            (rc = idx_ts_work_add(work, r->n_defs - seen_defs, IDX_TS_WORK_DEF, "its definitions",
                                  e)))
            break;
        seen_refs = refs;
        seen_defs = r->n_defs;
        if (!ts__predicates_hold(r, q, &m)) continue;
        TsDef d = {0};
        TSNode from = {0}, store_field = {0}, store_value = {0}, args = {0}, recv = {0},
               recv_call = {0}, operand = {0}, op = {0};
        int typed = 0;
        for (uint16_t i = 0; i < m.capture_count; i++) {
            CapKind k = kinds[m.captures[i].index];
            if (k == CAP_REF_FROM) from = m.captures[i].node;
            if (k == CAP_REF_ARGS) args = m.captures[i].node;
            if (k == CAP_RECV_TYPE) recv = m.captures[i].node;
            if (k == CAP_RECV_CALL) recv_call = m.captures[i].node;
            if (k == CAP_REF_OPERAND) operand = m.captures[i].node;
            if (k == CAP_REF_OP) op = m.captures[i].node;
            typed |= k >= CAP_VAR_NAME && k <= CAP_ARG_NAME;
        }
        if (typed) idx_chunk_ts_typed_capture(r, &m, kinds);
        if (!ts_node_is_null(recv) && !ts_node_is_null(recv_call)) {
            /* the call (written "?.m": an unknown receiver) is typed once
             * every call is in (chunk_ts_types.c); its line is where the
             * member expression starts, as the call's (a value over several
             * lines: `(Data{…\n}).Render(w)`) */
            TSNode member = ts_node_parent(recv_call);
            if (ts_node_is_null(member)) member = recv_call;
            ARRAY_GROW(r->typed, r->n_typed + 1, r->cap_typed);
            r->typed[r->n_typed++] = (TsTyped){.line = ts_node_start_point(member).row + 1,
                                               .arg = TS_TYPED_RECV,
                                               .name = idx_chunk_ts_name_text(r, recv_call),
                                               .type = idx_chunk_ts_name_text(r, recv)};
        }
        if (!ts_node_is_null(operand) && !ts_node_is_null(op)) ts__operator_ref(r, operand, op);
        for (uint16_t i = 0; i < m.capture_count; i++) {
            TSNode n = m.captures[i].node;
            CapKind k = kinds[m.captures[i].index];
            if (ts__is_def(k)) {
                d.cap = k;
                d.node = n;
            } else if (k == CAP_NAME) {
                d.name = n;
            } else if (k == CAP_BODY) {
                d.body = n;
            } else if (k == CAP_RECEIVER) {
                d.receiver = n;
            } else if (k == CAP_LOCAL) {
                ARRAY_GROW(r->locals, r->n_locals + 1, r->cap_locals);
                r->locals[r->n_locals++] = (ChunkRef){.line = ts_node_start_point(n).row + 1,
                                                      .name = idx_chunk_ts_name_text(r, n)};
            } else if (k == CAP_REF_WRITER) {
                /* `TEST_F(Suite, Name) {…}`: a use of the macro TEST_F */
                ChunkRef *ref =
                    idx_emit_ref_push(&r->em, REF_CALL, -1, ts_node_start_point(n).row + 1);
                char *nm = idx_chunk_ts_name_text(r, n);
                sb_reset(&r->sb);
                sb_adds(&r->sb, IDX_REF_WRITER);
                sb_adds(&r->sb, nm);
                free(nm);
                ref->name = xstrndup(r->sb.buf, r->sb.len);
            } else if (k == CAP_REF_EXPAND) {
                idx_chunk_ts_expand_refs(r, n);
            } else if (k == CAP_PP_IF) {
                idx_chunk_ts_pp_if(r, n, out);
            } else if (k == CAP_PP_DEFINE) {
                idx_chunk_ts_pp_define(r, n, out);
            } else if (k == CAP_REF_CALL || k == CAP_REF_TYPE || k == CAP_REF_INHERIT ||
                       k == CAP_REF_VALUE || k == CAP_REF_NEW) {
                uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
                /* a called name right after `.` or `::` (in tokens a grammar
                 * leaves unparsed) ends a chain another pattern captures
                 * whole, with its @ref.from */
                if (k == CAP_REF_CALL && ts_node_is_null(from) && ts__after_dot(r, a)) {
                    TSNode prev = ts_node_prev_sibling(n);
                    if (!ts_node_is_null(prev) && !ts_node_is_named(prev) &&
                        (!strcmp(ts_node_type(prev), ".") || !strcmp(ts_node_type(prev), "::")))
                        continue;
                }
                /* obj.name(...) captured as @ref.from obj and @ref.call name */
                if (!ts_node_is_null(from) && ts_node_start_byte(from) < a)
                    a = ts_node_start_byte(from);
                if (b > r->em.len || !ts__chain(&r->sb, r->lang, r->em.src, a, b)) continue;
                uint32_t line = ts_node_start_point(n).row + 1;
                if (k == CAP_REF_TYPE) {
                    ARRAY_GROW(r->types, r->n_types + 1, r->cap_types);
                    r->types[r->n_types++] = (ChunkRef){.kind = REF_TYPE,
                                                        .chunk = -1,
                                                        .line = line,
                                                        .name = xstrndup(r->sb.buf, r->sb.len)};
                    continue;
                }
                RefKind rk = k == CAP_REF_INHERIT ? REF_INHERIT
                             : k == CAP_REF_VALUE ? REF_VALUE
                                                  : REF_CALL;
                ChunkRef *ref = idx_emit_ref_push(&r->em, rk, -1, line);
                if (k == CAP_REF_NEW) { /* IDX_REF_CONSTRUCT "Foo" */
                    size_t pre = strlen(IDX_REF_CONSTRUCT);
                    ref->name = xmalloc(pre + r->sb.len + 1);
                    memcpy(ref->name, IDX_REF_CONSTRUCT, pre);
                    memcpy(ref->name + pre, r->sb.buf, r->sb.len);
                    ref->name[pre + r->sb.len] = 0;
                } else {
                    ref->name = xstrndup(r->sb.buf, r->sb.len);
                }
                if (rk == REF_CALL && !ts_node_is_null(args)) {
                    ref->argc = 1 + ts__argc(r, args);
                    if (r->lang->literal_types) idx_chunk_ts_arg_types(r, ref, args, (TSNode){0});
                }
            } else if (k == CAP_IMPORT && r->lang->import) {
                r->lang->import(&lp, n);
            } else if (k == CAP_INTERFACE) {
                /* a fact of the class whose header holds it, as a field's */
                ARRAY_GROW(r->typed, r->n_typed + 1, r->cap_typed);
                r->typed[r->n_typed++] = (TsTyped){.line = ts_node_start_point(n).row + 1,
                                                   .field = 1,
                                                   .name = xstrdup(IDX_REF_INTERFACE_NAME),
                                                   .type = xstrdup(IDX_REF_INTERFACE_NAME)};
            } else if (k == CAP_PACKAGE && !out->package) {
                out->package = idx_chunk_ts_name_text(r, n);
            } else if (k == CAP_STORE_FIELD) {
                store_field = n;
            } else if (k == CAP_STORE_VALUE) {
                store_value = n;
            }
        }
        if (!ts_node_is_null(store_field) && !ts_node_is_null(store_value) &&
            ts_node_end_byte(store_field) <= r->em.len &&
            ts_node_end_byte(store_value) <= r->em.len) {
            uint32_t fa = ts_node_start_byte(store_field), va = ts_node_start_byte(store_value);
            ChunkRef *ref =
                idx_emit_ref_push(&r->em, REF_STORE, -1, ts_node_start_point(store_value).row + 1);
            sb_reset(&r->sb);
            sb_add(&r->sb, r->em.src + fa, ts_node_end_byte(store_field) - fa);
            sb_addc(&r->sb, '.');
            sb_add(&r->sb, r->em.src + va, ts_node_end_byte(store_value) - va);
            ref->name = xstrndup(r->sb.buf, r->sb.len);
        }
        /* the name can be misread only where the definition holds an
         * error (ts_node_next_sibling walks down from the root) */
        if (d.cap && !ts_node_is_null(d.name) &&
            (ts_node_has_error(d.node) || !ts__inside(d.name, d.node)))
            d.name = ts__true_name(d.name);
        if (d.cap && !ts_node_is_null(d.name) &&
            ts_node_end_byte(d.name) > ts_node_start_byte(d.name)) {
            ARRAY_GROW(r->defs, r->n_defs + 1, r->cap_defs);
            r->defs[r->n_defs++] = d;
        }
    }
    ts_query_cursor_delete(qc);
    free(kinds);
    /* A chunk's calls lead its edges, the types it mentions follow: the
     * graph walk takes a few edges per definition, and what a function
     * calls says more about it than the types in its signature. */
    r->first_type = r->em.n_refs;
    for (size_t i = 0; i < r->n_types; i++) {
        ChunkRef *ref = idx_emit_ref_push(&r->em, REF_TYPE, -1, r->types[i].line);
        ref->name = r->types[i].name;
    }
    free(r->types);
    r->types = NULL;
    r->n_types = r->cap_types = 0;
    return rc;
}

static int ts__def_cmp(const void *pa, const void *pb)
{
    const TsDef *a = pa, *b = pb;
    uint32_t sa = ts_node_start_byte(a->node), sb = ts_node_start_byte(b->node);
    if (sa != sb) return sa < sb ? -1 : 1;
    uint32_t ea = ts_node_end_byte(a->node), eb = ts_node_end_byte(b->node);
    if (ea != eb) return ea > eb ? -1 : 1;
    return (int)a->cap - (int)b->cap;
}

/* The node with its wrappers (template, export) and leading attributes. */
static TSNode ts__outer(const TsRun *r, TSNode n)
{
    if (!r->lang->wrappers) return n; /* spares ts_node_parent: a walk from the root */
    for (TSNode p = ts_node_parent(n); !ts_node_is_null(p) && ts__kind_in(p, r->lang->wrappers);
         p = ts_node_parent(p))
        n = p;
    return n;
}

/* The first of the attributes right before outer (or outer itself). */
static TSNode ts__first_prefix(const TsRun *r, TSNode outer)
{
    TSNode first = outer;
    if (!r->lang->prefixes) return first; /* spares ts_node_prev_sibling */
    for (TSNode p = ts_node_prev_sibling(outer);
         !ts_node_is_null(p) && ts__kind_in(p, r->lang->prefixes); p = ts_node_prev_sibling(p))
        first = p;
    return first;
}

static IdxKind ts__idx_kind(CapKind k, int in_container)
{
    switch (k) {
    case CAP_DEF_CLASS:
    case CAP_DEF_IMPL:
    case CAP_DEF_NAMESPACE:
    case CAP_DEF_TYPE:
    case CAP_DEF_CONSTANT:
        return IDX_KIND_CLASS;
    case CAP_DEF_METHOD:
        return IDX_KIND_METHOD;
    default:
        return in_container ? IDX_KIND_METHOD : IDX_KIND_FUNCTION;
    }
}

/* The unit this definition overloads: the last unit made, when it is a
 * function with the same symbol that ends before this one starts, the two
 * together within half a window (any size after a declaration without a
 * body: TypeScript's overload signatures above their implementation);
 * else -1. Java and C++ overloads (constructors above all) would otherwise
 * each take a place in the ranking with the same name and nearly the same
 * words. */
/* Whether a call's arity can tell the two signatures apart, in a row with
 * `overloads` (name: the last part of their symbol). */
static int ts__told_apart(const IdxLang *lang, const char *a, const char *b, const char *symbol)
{
    const char *dot = strrchr(symbol, '.');
    const char *name = dot ? dot + 1 : symbol;
    int alo = 0, ahi = 0, blo = 0, bhi = 0;
    return a && b && idx_sig_params(a, name, &alo, &ahi) && idx_sig_params(b, name, &blo, &bhi) &&
           (alo != blo || ahi != bhi || idx_sig_types_differ(lang, a, b, name));
}

static int ts__overload_of(TsRun *r, const TsDef *d, const char *symbol, uint32_t start,
                           uint32_t end)
{
    CapKind cap = d->cap;
    if (!r->em.n_units || ts__is_container(cap) || cap == CAP_DEF_TYPE) return -1;
    int last = (int)r->em.n_units - 1;
    const EmitUnit *u = &r->em.units[last];
    /* a definition per #if branch is a variant of its own (pp.c says
     * which one the build compiles) */
    /* where overloads are told apart (by arity), each is a unit of its
     * own, its callers its own (a signature without a body still joins) */
    if (u->kind == IDX_KIND_CLASS || u->end >= start || idx_chunk_ts_pp_apart(r, u->start, start) ||

        (last != r->sig_unit && end - u->start + 1 > r->em.max_lines / 2) ||
        strcmp(u->symbol, symbol))
        return -1;
    /* where overloads are told apart by arity, those a call's arity tells
     * apart are units of their own, their callers their own */
    if (r->lang->overloads && last != r->sig_unit) {
        char *sig = idx_chunk_ts_signature(r, d);
        int apart = ts__told_apart(r->lang, u->signature, sig, symbol);
        free(sig);
        if (apart) return -1;
    }
    return last;
}

/* Forgets the last unit made (nothing refers to it yet). */
static void ts__drop_last_unit(TsRun *r)
{
    EmitUnit *u = &r->em.units[--r->em.n_units];
    free(u->symbol);
    free(u->signature);
    free(u->doc);
    memset(u, 0, sizeof *u);
    r->sig_unit = -1;
}

/* Nests the definitions by byte range and makes units of them. */
static void ts__units(TsRun *r)
{
    if (r->n_defs > 1) qsort(r->defs, r->n_defs, sizeof *r->defs, ts__def_cmp);
    size_t depth = 0;
    int *open = xmalloc((r->n_defs + 1) * sizeof *open); /* unit ids, -1 for a skipped def */
    uint32_t *open_end = xmalloc((r->n_defs + 1) * sizeof *open_end);
    CapKind *open_cap = xmalloc((r->n_defs + 1) * sizeof *open_cap);
    uint32_t prev_a = UINT32_MAX, prev_b = 0;
    for (size_t i = 0; i < r->n_defs; i++) {
        TsDef *d = &r->defs[i];
        uint32_t a = ts_node_start_byte(d->node), b = ts_node_end_byte(d->node);
        if (a == prev_a && b == prev_b) continue; /* the same node from two patterns */
        /* a constant of one line stays module code; a table is a definition */
        if (d->cap == CAP_DEF_CONSTANT &&
            ts_node_start_point(d->node).row == ts_node_end_point(d->node).row)
            continue;
        prev_a = a;
        prev_b = b;
        while (depth && open_end[depth - 1] <= a)
            depth--;
        int up = -1;
        if (depth) {
            CapKind pc = open_cap[depth - 1];
            if (!ts__is_container(pc) || open[depth - 1] < 0) {
                /* inside a function or a type: part of it */
                open[depth] = -1;
                open_end[depth] = b;
                open_cap[depth++] = d->cap;
                continue;
            }
            up = open[depth - 1];
        }
        char *name = idx_chunk_ts_name_text(r, d->name);
        char *recv = ts_node_is_null(d->receiver) ? NULL : idx_chunk_ts_name_text(r, d->receiver);
        TSNode outer = ts__outer(r, d->node);
        TSNode first = ts__first_prefix(r, outer);
        uint32_t end =
            idx_emit_end_line(&r->em, ts_node_start_byte(outer), ts_node_end_byte(outer));
        /* the doc comment becomes the docstring; its lines stay outside
         * the definition (measured: inside, they cost recall) */
        uint32_t start = ts_node_start_point(first).row + 1, doc_line = 0;
        char *doc = idx_chunk_ts_doc(r, first, &doc_line);
        int parent = up;
        StrBuf sym;
        sb_init(&sym);
        if (up >= 0) {
            sb_adds(&sym, r->em.units[up].symbol);
            sb_addc(&sym, '.');
        } else if (recv && recv[0]) {
            sb_adds(&sym, recv);
            sb_addc(&sym, '.');
            parent = idx_emit_unit_by_symbol(&r->em, recv);
        } else if (strrchr(name, '.')) { /* Foo::bar defined outside Foo */
            char *owner = xstrndup(name, (size_t)(strrchr(name, '.') - name));
            parent = idx_emit_unit_by_symbol(&r->em, owner);
            free(owner);
        }
        sb_adds(&sym, name);
        int in_container = up >= 0 || (recv && recv[0]) || strchr(name, '.') != NULL;
        int id = ts__overload_of(r, d, sym.buf, start, end);
        if (id >= 0 && id == r->sig_unit && !ts_node_is_null(d->body) && doc && doc[0]) {
            /* an implementation with a doc of its own after its signatures
             * (RxJS documents the last one): it is the definition, its doc
             * outside its lines as every definition's; the signatures above
             * the doc are module code. One unit would hold the doc inside,
             * and the window packed of it would be the doc, not the code. */
            ts__drop_last_unit(r);
            id = -1;
        }
        if (id >= 0) {
            /* an overload right after its namesake: one unit for both. Its
             * doc is the first one among them, and after a signature every
             * one (TypeScript documents overloads one by one, the main doc
             * often above the last signature). */
            EmitUnit *u = &r->em.units[id];
            u->end = end;
            if (doc && doc[0] && (!u->doc || !u->doc[0])) {
                free(u->doc);
                u->doc = doc;
                doc = NULL;
            } else if (doc && doc[0] && id == r->sig_unit) {
                size_t had = strlen(u->doc), add = strlen(doc);
                u->doc = xrealloc(u->doc, had + add + 2);
                u->doc[had] = '\n';
                memcpy(u->doc + had + 1, doc, add + 1);
            }
            r->sig_unit = ts_node_is_null(d->body) ? id : -1;
            sb_release(&sym);
            free(doc);
            free(name);
            free(recv);
            open[depth] = id;
            open_end[depth] = b;
            open_cap[depth++] = d->cap;
            continue;
        }
        id = idx_emit_unit_add(&r->em, ts__idx_kind(d->cap, in_container), parent, start, end,
                               sb_detach(&sym, NULL), idx_chunk_ts_signature(r, d), doc);
        r->sig_unit = ts_node_is_null(d->body) && !ts__is_container(d->cap) ? id : -1;
        free(name);
        free(recv);
        open[depth] = id;
        open_end[depth] = b;
        open_cap[depth++] = d->cap;
    }
    free(open);
    free(open_end);
    free(open_cap);
}

/* ---------------------------------------------------------------- lines */

int idx_ts_walk_next(TSTreeCursor *cur, size_t *depth, int descend)
{
    if (descend && ts_tree_cursor_goto_first_child(cur)) {
        (*depth)++;
        return 1;
    }
    while (!ts_tree_cursor_goto_next_sibling(cur)) {
        if (*depth == 0 || !ts_tree_cursor_goto_parent(cur)) return 0;
        (*depth)--;
    }
    return 1;
}

/* A byte's part in the text's scan: a word byte (letters, digits, `_`,
 * any byte of a character past ASCII), a blank, an opening bracket, a
 * closing one, a comma, or other punctuation (every file's every byte
 * passes here: a few comparisons and one table load). */
enum { TS_TEXT_PUNCT, TS_TEXT_WORD, TS_TEXT_BLANK, TS_TEXT_OPEN, TS_TEXT_CLOSE, TS_TEXT_COMMA };
static const unsigned char ts__text_punct[128] = {
    ['('] = TS_TEXT_OPEN,  ['['] = TS_TEXT_OPEN,  ['{'] = TS_TEXT_OPEN,  [')'] = TS_TEXT_CLOSE,
    [']'] = TS_TEXT_CLOSE, ['}'] = TS_TEXT_CLOSE, [','] = TS_TEXT_COMMA,
};

static unsigned ts__text_class(unsigned char c)
{
    if (c <= ' ') return TS_TEXT_BLANK;
    if (c >= 128 || c == '_' || (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z'))
        return TS_TEXT_WORD;
    return ts__text_punct[c];
}

/* ceil(log2 n), n >= 1: the hidden levels a list of n children is
 * balanced into, as idx_ts_nesting_work counts them */
static uint64_t ts__log2_up(uint64_t n)
{
    uint64_t lg = 0;
    while (lg < 64 && ((uint64_t)1 << lg) < n)
        lg++;
    return lg;
}

CrErr idx_ts_text_check(const char *src, size_t len, IdxTsWork *work, int queried, ErrInfo *e)
{
    /* commas[d]: the commas met at depth d + 1 since its bracket opened */
    uint32_t *commas = work ? xcalloc(TS_NEST_MAX_BRACKETS + 1, sizeof *commas) : NULL;
    uint64_t tokens = 0, levels = 0;
    size_t depth = 0;
    int word = 0;
    CrErr rc = CR_OK;
    for (size_t i = 0; i < len; i++) {
        unsigned k = ts__text_class((unsigned char)src[i]);
        tokens += k == TS_TEXT_WORD ? !word : k != TS_TEXT_BLANK;
        word = k == TS_TEXT_WORD;
        if (k == TS_TEXT_OPEN) {
            if (++depth > TS_NEST_MAX_BRACKETS) {
                rc = err_set(e, CR_ETOOBIG, "brackets open %zu deep at byte %zu", depth, i);
                break;
            }
            if (commas) commas[depth - 1] = 0;
        } else if (k == TS_TEXT_CLOSE && depth) {
            depth--;
            /* a bracketed list of c commas: a node of at least 2c + 1
             * children (its items and commas), each below the log of
             * that many hidden levels */
            uint64_t n = commas && commas[depth] ? 2 * (uint64_t)commas[depth] + 1 : 0;
            if (n) levels += n * ts__log2_up(n);
        } else if (k == TS_TEXT_COMMA && depth && commas) {
            commas[depth - 1]++;
        }
    }
    free(commas);
    if (rc || !work) return rc;
    /* what the tree's walk will count, known from the text: a token of the
     * text is a leaf of the tree (a string or a comment is fewer: the walk
     * pays back no more than it counts, idx_ts_work_tree) */
    rc = idx_ts_work_ahead(work, tokens, queried ? IDX_TS_WORK_NODE : IDX_TS_WORK_WALK, "its text",
                           e);
    if (!rc && queried) rc = idx_ts_work_ahead(work, levels, IDX_TS_WORK_LEVEL, "its text", e);
    return rc;
}

void idx_ts_nest_init(IdxTsNest *n, size_t len)
{
    n->sum = n->nodes = 0;
    n->cap = TS_NEST_PER_BYTE * (uint64_t)len + TS_NEST_SLACK;
}

CrErr idx_ts_nest_step(IdxTsNest *n, size_t depth, ErrInfo *e)
{
    n->nodes++;
    n->sum += depth;
    if (n->sum > n->cap || depth > TS_NEST_MAX_DEPTH)
        return err_set(e, CR_ETOOBIG, "nested too deep for its size (%zu levels, %llu in all)",
                       depth, (unsigned long long)n->sum);
    return CR_OK;
}

CrErr idx_ts_nesting_work(TSNode root, size_t len, IdxTsWork *work, int queried, ErrInfo *e)
{
    TSTreeCursor cur = ts_tree_cursor_new(root);
    size_t depth = 0, cap = 0;
    IdxTsNest nest;
    idx_ts_nest_init(&nest, len);
    /* levels[d]: the hidden levels under the node open at depth d (a list
     * of n children is balanced into about log2 n of them), which a query
     * walks up from each of its children */
    uint8_t *levels = NULL;
    uint64_t hidden = 0;
    CrErr rc = CR_OK;
    do {
        if ((rc = idx_ts_nest_step(&nest, depth, e))) break;
        if (!work || !queried) continue;
        if (depth) hidden += levels[depth - 1];
        uint32_t n = ts_node_child_count(ts_tree_cursor_current_node(&cur));
        uint8_t lg = 0;
        while (lg < 32 && ((uint32_t)1 << lg) < n)
            lg++;
        ARRAY_GROW(levels, depth + 1, cap);
        levels[depth] = lg;
    } while (idx_ts_walk_next(&cur, &depth, 1));
    ts_tree_cursor_delete(&cur);
    free(levels);
    if (!rc)
        rc = idx_ts_work_tree(work, nest.nodes, queried ? IDX_TS_WORK_NODE : IDX_TS_WORK_WALK,
                              "its nodes", e);
    if (!rc) rc = idx_ts_work_tree(work, hidden, IDX_TS_WORK_LEVEL, "its lists", e);
    return rc;
}

/* Comment lines (for dropping comment-only runs) and statement starts (cut
 * points for windows), from one walk over the tree. */
static void ts__mark_lines(TsRun *r, TSNode root)
{
    TSTreeCursor cur = ts_tree_cursor_new(root);
    size_t depth = 0;
    int descend = 1;
    while (idx_ts_walk_next(&cur, &depth, descend)) {
        TSNode n = ts_tree_cursor_current_node(&cur);
        descend = 1;
        if (chunk_ts__is_comment(r, ts_node_symbol(n))) {
            idx_emit_mark_comment(&r->em, ts_node_start_byte(n), ts_node_end_byte(n));
            descend = 0;
        } else if (ts_node_is_named(n)) {
            TSPoint p = ts_node_start_point(n);
            uint32_t l = p.row + 1;
            if (l <= r->em.n_lines && r->em.line_start[l] + p.column <= ts_node_start_byte(n) &&
                ts_node_start_byte(n) == idx_emit_first_byte(&r->em, l))
                r->em.cut[l] = 1;
            /* nodes of one line hold no further statement starts */
            if (ts_node_end_point(n).row == p.row) descend = 0;
        }
    }
    ts_tree_cursor_delete(&cur);
    /* a line of closing brackets alone ("}", "});") is not code of its
     * own: it stays in the chunk it closes but never makes a chunk */
    for (uint32_t l = 1; l <= r->em.n_lines; l++) {
        if (r->em.line_kind[l] != EMIT_CODE) continue;
        uint32_t p = idx_emit_first_byte(&r->em, l), e = r->em.line_start[l + 1];
        while (p < e && strchr("})]>;, \t\r\n", r->em.src[p]))
            p++;
        if (p == e) r->em.line_kind[l] = EMIT_COMMENT;
    }
}

CrErr idx_chunk_ts(TSParser *parser, TsKeep *keep, const TSQuery *query, IdxQueries *qs,
                   const IdxLang *lang, const char *src, size_t len, uint32_t max_lines,
                   ChunkSet *out, ErrInfo *e)
{
    TsRun r;
    CrErr rc = CR_OK;
    TSTree *tree = NULL;
    memset(&r, 0, sizeof r);
    if (!src) len = 0;
    if (!src) src = "";
    char *masked = lang->mask ? lang->mask(src, len) : NULL;
    IdxTsWork work;
    idx_ts_work_init(&work, len);
    rc = idx_ts_text_check(masked ? masked : src, len, &work, 1, e);
    if (!rc) rc = idx_ts_parse_counted(parser, keep, masked ? masked : src, len, &work, &tree, e);
    free(masked);
    if (rc) return rc;
    sb_init(&r.sb);
    r.lang = lang;
    r.out = out;
    r.sig_unit = -1;
    r.tl = ts_parser_language(parser);
    for (size_t i = 0; lang->comments && lang->comments[i] && r.n_comment_syms < 4; i++) {
        TSSymbol s = ts_language_symbol_for_name(r.tl, lang->comments[i],
                                                 (uint32_t)strlen(lang->comments[i]), 1);
        if (s) r.comment_syms[r.n_comment_syms++] = s;
    }
    idx_emit_init(&r.em, src, (uint32_t)len, max_lines);
    TSNode root = ts_tree_root_node(tree);
    if ((rc = idx_ts_nesting_work(root, len, &work, 1, e))) {
        ts_tree_delete(tree);
        idx_emit_release(&r.em);
        sb_release(&r.sb);
        return rc;
    }
    /* the shared query, compiled on a thread of its own while this parsed
     * (idx_queries_start): waited for only now */
    if (!query && qs && lang->query && !(query = idx_queries_get(qs, lang))) {
        rc = err_set(e, CR_EPARSE, "no usable grammar or query for '%s'", lang->name);
        goto out;
    }
    out->had_errors = out->had_errors || ts_node_has_error(root);
    ts__mark_lines(&r, root);
    if (query && (rc = ts__collect(&r, query, root, out, &work, e))) goto out;
    ts__units(&r);
    idx_emit_build(&r.em, out);
    idx_chunk_ts_fix_refs(&r);
    idx_chunk_ts_typed_refs(&r);
    idx_chunk_ts_pp_sites(&r, out);
    if (lang->implicit_this) idx_chunk_ts_member_refs(&r);
    idx_chunk_ts_local_calls_first(&r);
    idx_emit_refs_out(&r.em, out);
    rc = idx_ts_work_kept(&work, out, e);
out:
    ts_tree_delete(tree);
    idx_emit_release(&r.em);
    for (size_t i = 0; i < r.n_locals; i++)
        free(r.locals[i].name);
    free(r.locals);
    for (size_t i = 0; i < r.n_typed; i++) {
        free(r.typed[i].name);
        free(r.typed[i].type);
    }
    free(r.typed);
    free(r.defs);
    sb_release(&r.sb);
    return rc;
}
