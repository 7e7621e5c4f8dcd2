/* chunk_ts_types.c - receivers of a known type, from a row's query: a
 * variable, parameter or receiver declared with a type (@var.name and
 * @var.type; the type may be a call, `x := NewRouter()`: what it gives),
 * a field of a class (@field.name, @field.type) and a function's result
 * (@result.type). Calls are written in the forms graph_types.c resolves:
 * `x.m()` with x of type T in the same definition is "T().m", `this.a.m()`
 * in a method is "Class().a.m" (a's type read from Class's field facts);
 * a field is the fact "=a:T" on its class, a result "=():T" on its
 * function. A variable of the file's scope types the calls of every
 * definition that declares no variable of that name. What no capture
 * types is left as written. */
#include "chunk_ts_int.h"

#include <stdlib.h>
#include <string.h>

static int types__ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '$' || (unsigned char)c >= 0x80;
}

char *idx_chunk_ts_name_text(TsRun *r, TSNode n)
{
    const char *src = r->em.src;
    uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
    StrBuf *sb = &r->sb;
    sb_reset(sb);
    if (b > r->em.len) b = r->em.len;
    int depth = 0, op = 0;
    for (uint32_t i = a; i < b; i++) {
        char c = src[i];
        /* an operator's symbol is part of its name (`operator==`,
         * `operator()`): operators of one class are told apart */
        if (!op && !depth && c != ':' && c != '~' && c != '.' && !types__ident_char(c) &&
            c != ' ' && c != '\t' && c != '\n' && sb->len >= 8 &&
            !memcmp(sb->buf + sb->len - 8, "operator", 8) &&
            (sb->len == 8 || sb->buf[sb->len - 9] == '.'))
            op = 1;
        if (op) {
            if (c != ' ' && c != '\t' && c != '\n') sb_addc(sb, c);
            continue;
        }
        if (c == '<')
            depth++;
        else if (c == '>' && depth)
            depth--;
        else if (depth)
            continue;
        else if (c == ':' && i + 1 < b && src[i + 1] == ':') {
            if (sb->len) sb_addc(sb, '.');
            i++;
        } else if (types__ident_char(c) || c == '~' || c == '.') {
            /* a word after a blank starts the name again: a macro the
             * grammar read into the name (`FMT_API std::system_error
             * vsystem_error(…)`) is no part of it (but `operator new` is) */
            if (i > a && (src[i - 1] == ' ' || src[i - 1] == '\t' || src[i - 1] == '\n') &&
                sb->len && types__ident_char(sb->buf[sb->len - 1]) &&
                !(sb->len >= 8 && !memcmp(sb->buf + sb->len - 8, "operator", 8)))
                sb_reset(sb);
            sb_addc(sb, c);
        } else if (c == '\'') { /* a lifetime: skip it */
            while (i + 1 < b && types__ident_char(src[i + 1]))
                i++;
        }
    }
    return xstrndup(sb->buf, sb->len);
}

/* The position of parameter or argument n among its siblings, from 0: a
 * comment, or a parameter naming the object the function runs on (`this:
 * T`, the row's self word), takes none. */
static int types__position(const TsRun *r, TSNode n)
{
    int k = 0;
    for (TSNode s = ts_node_prev_named_sibling(n); !ts_node_is_null(s);
         s = ts_node_prev_named_sibling(s)) {
        if (ts_node_is_extra(s)) continue;
        TSNode first = ts_node_named_child_count(s) ? ts_node_named_child(s, 0) : s;
        uint32_t a = ts_node_start_byte(first), b = ts_node_end_byte(first);
        if (first.id != s.id && b <= r->em.len && idx_lang_self_word(r->lang, r->em.src + a, b - a))
            continue;
        k++;
    }
    return k;
}

/* A callback's parameter (@arg.*): in a declaration, the type of parameter
 * J of a function-typed parameter K (the fact "=#K#J:T" on the function);
 * at a call, an untyped parameter J of the function passed as argument K,
 * a variable of type "callee#K#J" (what the callee's fact says). */
static void types__arg_capture(TsRun *r, const TSQueryMatch *m, const CapKind *kinds)
{
    TSNode fn = {0}, param = {0}, type = {0}, callee = {0}, name = {0};
    for (uint16_t i = 0; i < m->capture_count; i++) {
        TSNode n = m->captures[i].node;
        switch (kinds[m->captures[i].index]) {
        case CAP_ARG_FN:
            fn = n;
            break;
        case CAP_ARG_PARAM:
            param = n;
            break;
        case CAP_ARG_TYPE:
            type = n;
            break;
        case CAP_ARG_CALLEE:
            callee = n;
            break;
        case CAP_ARG_NAME:
            name = n;
            break;
        default:
            break;
        }
    }
    if (ts_node_is_null(fn) || ts_node_is_null(param)) return;
    int decl = !ts_node_is_null(type);
    if (!decl && (ts_node_is_null(callee) || ts_node_is_null(name) ||
                  !ts_node_is_null(ts_node_child_by_field_name(param, "type", 4))))
        return;  /* a parameter declared with a type is typed by it */
    if (!decl) { /* a callee in a chain of calls (`a.f().g`) is not typed */
        uint32_t a = ts_node_start_byte(callee), b = ts_node_end_byte(callee);
        if (b > r->em.len || memchr(r->em.src + a, '(', b - a)) return;
    }
    char *t = idx_chunk_ts_name_text(r, decl ? type : callee);
    if (!t[0] || t[0] == '.' || t[strlen(t) - 1] == '.') {
        free(t);
        return;
    }
    StrBuf *sb = &r->sb;
    sb_reset(sb);
    if (!decl) sb_adds(sb, t);
    sb_addf(sb, "%s%d%s%d", IDX_REF_ARG, types__position(r, fn), IDX_REF_ARG,
            types__position(r, param));
    ARRAY_GROW(r->typed, r->n_typed + 1, r->cap_typed);
    TsTyped *v = &r->typed[r->n_typed++];
    memset(v, 0, sizeof *v);
    v->line = ts_node_start_point(decl ? type : name).row + 1;
    v->arg = decl ? 1 : 2;
    if (decl) {
        v->name = xstrndup(sb->buf, sb->len);
        v->type = t;
    } else {
        v->type = xstrndup(sb->buf, sb->len);
        v->name = idx_chunk_ts_name_text(r, name);
        free(t);
    }
}

void idx_chunk_ts_typed_capture(TsRun *r, const TSQueryMatch *m, const CapKind *kinds)
{
    TSNode type = {0};
    CapKind tk = CAP_NONE;
    for (uint16_t i = 0; i < m->capture_count; i++) {
        CapKind k = kinds[m->captures[i].index];
        if (k >= CAP_ARG_FN && k <= CAP_ARG_NAME) {
            types__arg_capture(r, m, kinds);
            return;
        }
    }
    for (uint16_t i = 0; i < m->capture_count; i++) {
        CapKind k = kinds[m->captures[i].index];
        if (k == CAP_VAR_TYPE || k == CAP_FIELD_TYPE || k == CAP_RESULT_TYPE || k == CAP_VAR_ELEM ||
            k == CAP_FIELD_ELEM) {
            type = m->captures[i].node;
            tk = k;
        }
    }
    if (tk == CAP_NONE) return;
    char *t = idx_chunk_ts_name_text(r, type);
    if (!t[0] || t[0] == '.' || t[strlen(t) - 1] == '.') {
        free(t);
        return;
    }
    if (tk == CAP_VAR_ELEM || tk == CAP_FIELD_ELEM) { /* an array: "T" IDX_REF_ELEM */
        size_t n = strlen(t);
        t = xrealloc(t, n + sizeof IDX_REF_ELEM);
        memcpy(t + n, IDX_REF_ELEM, sizeof IDX_REF_ELEM);
        tk = tk == CAP_VAR_ELEM ? CAP_VAR_TYPE : CAP_FIELD_TYPE;
    }
    CapKind want = tk == CAP_VAR_TYPE ? CAP_VAR_NAME : CAP_FIELD_NAME;
    for (uint16_t i = 0; i < m->capture_count; i++) {
        TSNode n = m->captures[i].node;
        CapKind nk = kinds[m->captures[i].index];
        if (tk != CAP_RESULT_TYPE && nk != want &&
            !(want == CAP_VAR_NAME && (nk == CAP_VAR_TOP || nk == CAP_VAR_ADDR)))
            continue;
        if (tk == CAP_RESULT_TYPE) n = type;
        ARRAY_GROW(r->typed, r->n_typed + 1, r->cap_typed);
        TsTyped *v = &r->typed[r->n_typed++];
        v->line = ts_node_start_point(n).row + 1;
        v->name = tk == CAP_RESULT_TYPE ? NULL : idx_chunk_ts_name_text(r, n);
        v->type = xstrdup(t);
        v->field = tk == CAP_FIELD_TYPE;
        v->arg = 0;
        v->top = nk == CAP_VAR_TOP;
        v->address = nk == CAP_VAR_ADDR;
        /* `char** argv`: one level per `*` between the type and the name */
        uint32_t ta = ts_node_end_byte(type), tb = ts_node_start_byte(n), stars = 0;
        for (uint32_t b = ta; v->address && b < tb && tb <= r->em.len; b++)
            stars += r->em.src[b] == '*';
        if (stars > 1) v->address = (int)stars;
        if (v->name && (!v->name[0] || strchr(v->name, '.'))) {
            free(v->name);
            free(v->type);
            r->n_typed--;
        }
        if (tk == CAP_RESULT_TYPE) break;
    }
    free(t);
}

static const char *types__literal(const TsRun *r, const char *kind)
{
    const char *const *l = r->lang->literal_types;
    for (size_t i = 0; l && l[i] && l[i + 1]; i += 2)
        if (!strcmp(l[i], kind)) return l[i + 1];
    return NULL;
}

/* The code of type text t ("char*": a word and its pointer levels), a
 * string literal's prefix (text before the quote, [pre, pre + pn)) naming
 * its character type instead. */
static uint32_t types__code(const TsRun *r, const char *t, const char *pre, size_t pn)
{
    size_t n = strcspn(t, "*");
    int ptr = (int)strlen(t + n);
    const char *const *sp = r->lang->string_prefixes;
    for (size_t i = 0; pn && sp && sp[i] && sp[i + 1]; i += 2)
        if (strlen(sp[i]) == pn && !memcmp(sp[i], pre, pn))
            return idx_argt_code(r->lang, sp[i + 1], strlen(sp[i + 1]), ptr);
    return idx_argt_code(r->lang, t, n, ptr);
}

void idx_chunk_ts_arg_types(TsRun *r, ChunkRef *ref, TSNode args, TSNode skip)
{
    uint32_t k = 0, n = ts_node_named_child_count(args);
    for (uint32_t i = 0; i < n && k < IDX_ARGT_MAX; i++) {
        TSNode a = ts_node_named_child(args, i);
        if (!ts_node_is_null(skip) && ts_node_eq(a, skip)) continue;
        const char *t = types__literal(r, ts_node_type(a));
        if (!t && chunk_ts__is_comment(r, ts_node_symbol(a))) continue;
        uint32_t at = ts_node_start_byte(a), end = ts_node_end_byte(a);
        uint32_t code = 0;
        if (!t || end > r->em.len) {
        } else if (!strcmp(t, "*")) {
            code = IDX_ARGT_NULL;
        } else if (!strcmp(t, "&")) { /* &x: x's type, one level more */
            TSNode x = ts_node_named_child(a, 0);
            const char *xt = ts_node_is_null(x) ? NULL : types__literal(r, ts_node_type(x));
            if (r->em.src[at] == '&' && xt && !strcmp(xt, "=") &&
                ts_node_end_byte(x) - ts_node_start_byte(x) < 256) {
                ref->arg_at[k] = ts_node_start_byte(x);
                ref->arg_len[k] = (uint8_t)(ts_node_end_byte(x) - ts_node_start_byte(x));
                ref->arg_addr |= (uint8_t)(1u << k);
            }
        } else if (!strcmp(t, "=") || !strcmp(t, "@")) { /* typed after the pass */
            if (end - at < 256) {
                ref->arg_at[k] = at;
                ref->arg_len[k] = (uint8_t)(end - at);
            }
        } else {
            size_t pn = 0;
            while (at + pn < end && r->em.src[at + pn] != '"' && r->em.src[at + pn] != '\'' &&
                   pn < 3)
                pn++;
            code = types__code(r, t, r->em.src + at, at + pn < end ? pn : 0);
        }
        ref->argt |= (uint64_t)code << (IDX_ARGT_BITS * k);
        k++;
    }
}

/* The types of a call's arguments that are names (idx_chunk_ts_arg_types)
 * in unit o: a variable's declared type there, `this` the class's. */
static void types__arg_names(const TsRun *r, StrMap *vars, int o, ChunkRef *ref, StrBuf *key)
{
    for (int k = 0; k < IDX_ARGT_MAX; k++) {
        if (!ref->arg_len[k]) continue;
        const char *w = r->em.src + ref->arg_at[k];
        size_t n = ref->arg_len[k];
        int ptr = (ref->arg_addr >> k) & 1;
        const char *t = NULL;
        size_t tn = 0;
        const char *const *self = r->lang->self_words;
        int is_self = 0;
        for (size_t i = 0; self && self[i]; i++)
            is_self |= strlen(self[i]) == n && !memcmp(self[i], w, n);
        if (is_self) {
            const EmitUnit *u = o >= 0 ? &r->em.units[o] : NULL;
            const char *dot =
                u && u->symbol && u->kind == IDX_KIND_METHOD ? strrchr(u->symbol, '.') : NULL;
            if (!dot) continue;
            const char *c = dot;
            while (c > u->symbol && c[-1] != '.')
                c--;
            t = c;
            tn = (size_t)(dot - c);
            ptr = 1;
        } else {
            int64_t at = 0;
            for (int scope = 0; scope < 2 && !at; scope++) {
                sb_reset(key);
                if (scope)
                    sb_addc(key, 'G');
                else
                    sb_addi(key, o);
                sb_addc(key, ':');
                sb_add(key, w, n);
                if (!strmap_get(vars, key->buf, &at)) at = 0;
            }
            if (!at) continue;
            const TsTyped *v = &r->typed[at - 1];
            t = strrchr(v->type, '.');
            t = t ? t + 1 : v->type;
            tn = strcspn(t, "(");
            ptr += v->address;
        }
        uint32_t code = idx_argt_code(r->lang, t, tn, ptr);
        ref->argt |= (uint64_t)code << (IDX_ARGT_BITS * k);
    }
}

/* Whether type t is one of the row's scalar types (a variable of one
 * types a call's argument, never a receiver). */
static int types__scalar(const TsRun *r, const char *t)
{
    for (size_t i = 0; r->lang->scalar_types && r->lang->scalar_types[i]; i++)
        if (!strcmp(r->lang->scalar_types[i], t)) return 1;
    return 0;
}

/* The unit owning line l, or -1. */
static int types__owner(const TsRun *r, uint32_t l)
{
    return l >= 1 && l <= r->em.n_lines ? r->em.owner[l] : -1;
}

/* The unit owning typed variable v's line: -1 (the file's scope) for a
 * variable of the file's scope that is a definition of its own, in rows
 * with package_vars (a Go `var X = &T{…}` over several lines). */
static int types__var_owner(const TsRun *r, const TsTyped *v)
{
    int o = types__owner(r, v->line);
    if (o < 0 || !v->name || v->field || v->arg || !r->lang->package_vars) return o;
    const EmitUnit *u = &r->em.units[o];
    if (u->parent < 0 && u->kind != IDX_KIND_FUNCTION && u->kind != IDX_KIND_METHOD &&
        u->kind != IDX_KIND_CLASS && u->name && !strcmp(u->name, v->name))
        return -1;
    return o;
}

/* The typed form of chain (a call, or a type: `as_type`, where `this.m`
 * is m's result) written in unit o, into out: "T().rest" when its first
 * part is a variable of type T there, "Class().rest" for `this.a.m`,
 * IDX_REF_SUPER "m" for the row's parent_word (`super.m`) in a method; 0
 * when there is none. */
static int types__typed(const TsRun *r, StrMap *vars, int o, const char *chain, int as_type,
                        StrBuf *out)
{
    const char *dot = strchr(chain, '.');
    if (!dot || !dot[1]) return 0;
    const EmitUnit *u = o >= 0 ? &r->em.units[o] : NULL; /* NULL: module code */
    size_t first = (size_t)(dot - chain);
    const char *cls_end = u && u->symbol ? strrchr(u->symbol, '.') : NULL;
    sb_reset(out);
    const char *parent = r->lang->parent_word;
    if (parent && first == strlen(parent) && !memcmp(chain, parent, first)) {
        if (!u || u->kind != IDX_KIND_METHOD || strchr(dot + 1, '.')) return 0;
        sb_add(out, IDX_REF_SUPER, IDX_REF_SUPER_LEN - 3); /* "super" + "()." below */
    } else if ((first == IDX_RECEIVER_LEN && !memcmp(chain, IDX_RECEIVER, IDX_RECEIVER_LEN)) ||
               (as_type && idx_lang_self_word(r->lang, chain, first))) {
        /* (a type written as this.a, as the source has it: the row's word) */
        /* this.a.m(): through the enclosing class's field a */
        if (!u || u->kind != IDX_KIND_METHOD || !cls_end || (!as_type && !strchr(dot + 1, '.')))
            return 0;
        sb_add(out, u->symbol, (size_t)(cls_end - u->symbol));
    } else {
        sb_addi(out, o);
        sb_addc(out, ':');
        sb_add(out, chain, first);
        int64_t at = 0;
        if (!strmap_get(vars, out->buf, &at)) {
            /* a variable of the file's scope (`extern Test* g_test;`) */
            sb_reset(out);
            sb_addc(out, 'G');
            sb_addc(out, ':');
            sb_add(out, chain, first);
            if (!strmap_get(vars, out->buf, &at)) at = 0;
        }
        if (!at || types__scalar(r, r->typed[at - 1].type)) return 0;
        sb_reset(out);
        sb_adds(out, r->typed[at - 1].type);
    }
    sb_addf(out, "().%s", dot + 1);
    return 1;
}

/* Whether chain is an operator's call on a name ("a.operator=="). */
static int types__operator_call(const char *chain)
{
    const char *dot = strchr(chain, '.');
    const char *op = dot ? dot + 1 : NULL;
    return op && !strchr(op, '.') && !strncmp(op, "operator", 8) && op[8] &&
           !types__ident_char(op[8]);
}

/* The typed form of operator call chain ("a.operator==") in unit o:
 * "T().operator==" when a is a variable of type T there (or of the
 * file's scope) that holds no address; else 0. */
static int types__operator(const TsRun *r, StrMap *vars, int o, const char *chain, StrBuf *out)
{
    const char *dot = strchr(chain, '.');
    int64_t at = 0;
    for (int scope = 0; scope < 2 && !at; scope++) {
        sb_reset(out);
        if (scope)
            sb_addc(out, 'G');
        else
            sb_addi(out, o);
        sb_addc(out, ':');
        sb_add(out, chain, (size_t)(dot - chain));
        if (!strmap_get(vars, out->buf, &at)) at = 0;
    }
    if (!at || r->typed[at - 1].address || types__scalar(r, r->typed[at - 1].type)) return 0;
    sb_reset(out);
    sb_addf(out, "%s().%s", r->typed[at - 1].type, dot + 1);
    return 1;
}

void idx_chunk_ts_typed_refs(TsRun *r)
{
    StrMap
        vars; /* "unit:name" ("Funit:name": a field) -> index into r->typed + 1, or 0: two types */
    StrBuf key;
    strmap_init(&vars);
    sb_init(&key);
    size_t n_refs = r->em.n_refs;
    for (size_t i = 0; i < r->n_typed; i++) {
        TsTyped *v = &r->typed[i];
        int o = types__var_owner(r, v);
        /* a variable of module code (a test's `let client: Client` in a
         * describe callback) types the calls of module code */
        /* (a callback's parameter in module code types nothing: it is no
         * variable of the file's scope) */
        if ((o < 0 && (!v->name || v->field || v->arg)) || v->arg == TS_TYPED_RECV) continue;
        const EmitUnit *u = o >= 0 ? &r->em.units[o] : NULL;
        if (v->arg == 1) { /* a callback's parameter type: a fact of its function */
            if (u->kind != IDX_KIND_FUNCTION && u->kind != IDX_KIND_METHOD) continue;
            ChunkRef *f = idx_emit_ref_push(&r->em, REF_TYPE, o, v->line);
            sb_reset(&key);
            sb_addf(&key, "%s%s:%s", IDX_REF_TYPE_FACT, v->name, v->type);
            f->name = xstrndup(key.buf, key.len);
            continue;
        }
        if (!v->name) { /* a result: a fact of the function it ends the header of */
            /* (or of a type alias, `using A = T;`: what it names) */
            if (u->kind != IDX_KIND_FUNCTION && u->kind != IDX_KIND_METHOD &&
                !(u->kind == IDX_KIND_CLASS && u->start == u->end))
                continue;
            ChunkRef *f = idx_emit_ref_push(&r->em, REF_TYPE, o, v->line);
            sb_reset(&key);
            sb_addf(&key, "%s():", IDX_REF_TYPE_FACT);
            const char *cls_end = strrchr(u->symbol ? u->symbol : "", '.');
            const char *self_type = r->lang->self_type;
            if (self_type && !strcmp(v->type, self_type) && cls_end) /* the enclosing type */
                sb_add(&key, u->symbol, (size_t)(cls_end - u->symbol));
            else
                sb_adds(&key, v->type);
            f->name = xstrndup(key.buf, key.len);
            continue;
        }
        sb_reset(&key);
        if (v->field) sb_addc(&key, 'F');
        if (o < 0)
            sb_addc(&key, 'G'); /* the file's scope: read where no unit declares it */
        else
            sb_addi(&key, o);
        sb_addc(&key, ':');
        sb_adds(&key, v->name);
        int64_t had;
        if (strmap_get(&vars, key.buf, &had)) {
            if (had && strcmp(r->typed[had - 1].type, v->type) != 0) strmap_put(&vars, key.buf, 0);
            continue;
        }
        strmap_put(&vars, key.buf, (int64_t)i + 1);
    }
    /* fields: facts of their class (a field of a struct typed twice, in
     * two branches, says neither) */
    for (size_t i = 0; i < r->n_typed; i++) {
        TsTyped *v = &r->typed[i];
        int o = types__owner(r, v->line);
        /* a constructor's parameter property (`constructor(private c: C)`)
         * is a field of the constructor's class */
        int cls = o >= 0 && r->em.units[o].kind == IDX_KIND_METHOD ? r->em.units[o].parent : o;
        if (!v->name || o < 0 || !v->field || v->arg || cls < 0 ||
            r->em.units[cls].kind != IDX_KIND_CLASS)
            continue;
        sb_reset(&key);
        sb_addc(&key, 'F');
        sb_addi(&key, o);
        sb_addc(&key, ':');
        sb_adds(&key, v->name);
        int64_t at = 0;
        if (!strmap_get(&vars, key.buf, &at) || at != (int64_t)i + 1) continue;
        ChunkRef *f = idx_emit_ref_push(&r->em, REF_TYPE, cls, v->line);
        sb_reset(&key);
        sb_addf(&key, "%s%s:%s", IDX_REF_TYPE_FACT, v->name, v->type);
        f->name = xstrndup(key.buf, key.len);
    }
    /* a variable's type written through another (`q := c.getCache()`
     * with c typed): in declaration order, so a chain of them is followed */
    for (size_t i = 0; i < r->n_typed; i++) {
        TsTyped *v = &r->typed[i];
        int o = types__owner(r, v->line);
        if (v->field || v->arg == 1 || v->arg == TS_TYPED_RECV || !v->name || !strchr(v->type, '.'))
            continue;
        if (types__typed(r, &vars, o, v->type, 1, &key)) {
            free(v->type);
            v->type = xstrndup(key.buf, key.len);
        }
    }
    /* a variable of the file's scope: a fact of the module (package_vars),
     * "=X:T" on its module chunk, read by the calls on X in the module's
     * other files (graph_types.c) */
    for (size_t i = 0; i < r->n_typed && r->lang->package_vars; i++) {
        TsTyped *v = &r->typed[i];
        if (!v->name || v->field || v->arg || !v->top || types__var_owner(r, v) >= 0) continue;
        sb_reset(&key);
        sb_addf(&key, "G:%s", v->name);
        int64_t at = 0;
        if (!strmap_get(&vars, key.buf, &at) || at != (int64_t)i + 1) continue;
        ChunkRef *f = idx_emit_ref_push(&r->em, REF_TYPE, -1, v->line);
        sb_reset(&key);
        sb_addf(&key, "%s%s:%s", IDX_REF_TYPE_FACT, v->name, v->type);
        f->name = xstrndup(key.buf, key.len);
    }
    /* a call on a value written with its type (`(T{…}).m()`): "T().m",
     * one call of the line written "?.m" each */
    for (size_t i = 0; i < r->n_typed; i++) {
        TsTyped *v = &r->typed[i];
        if (v->arg != TS_TYPED_RECV || !v->type[0] || v->type[0] == '.' ||
            v->type[strlen(v->type) - 1] == '.')
            continue;
        sb_reset(&key);
        sb_addf(&key, "?.%s", v->name);
        for (size_t j = 0; j < n_refs; j++) {
            ChunkRef *ref = &r->em.refs[j];
            if (ref->kind != REF_CALL || ref->line != v->line || !ref->name ||
                strcmp(ref->name, key.buf) != 0)
                continue;
            sb_reset(&key);
            sb_addf(&key, "%s().%s", v->type, v->name);
            free(ref->name);
            ref->name = xstrndup(key.buf, key.len);
            break;
        }
    }
    /* calls on a typed variable of their definition, on this.a, on super;
     * member calls a macro's body makes (`g_test->Check(…)`); an operator
     * on a name whose type is not known, or holds an address, is dropped */
    size_t kept = 0, first_type = r->first_type;
    for (size_t i = 0; i < r->em.n_refs; i++) {
        ChunkRef *ref = &r->em.refs[i];
        int o = types__owner(r, ref->line);
        int call = i < n_refs && (ref->kind == REF_CALL || ref->kind == REF_EXPAND) && ref->name;
        if (call && ref->kind == REF_CALL && types__operator_call(ref->name)) {
            if (!types__operator(r, &vars, o, ref->name, &key)) {
                free(ref->name);
                if (i < r->first_type) first_type--;
                continue;
            }
            free(ref->name);
            ref->name = xstrndup(key.buf, key.len);
        } else if (call && types__typed(r, &vars, o, ref->name, 0, &key)) {
            free(ref->name);
            ref->name = xstrndup(key.buf, key.len);
        }
        if (call && ref->kind == REF_CALL &&
            (ref->arg_len[0] | ref->arg_len[1] | ref->arg_len[2] | ref->arg_len[3]))
            types__arg_names(r, &vars, o, ref, &key);
        r->em.refs[kept++] = *ref;
    }
    r->em.n_refs = kept;
    r->first_type = first_type;
    for (size_t i = 0; i < r->n_typed; i++) {
        free(r->typed[i].name);
        free(r->typed[i].type);
    }
    free(r->typed);
    r->typed = NULL;
    r->n_typed = r->cap_typed = 0;
    strmap_release(&vars);
    sb_release(&key);
}
