/* graph_types.c - calls on receivers of a known type, as a row's chunker
 * writes them (lang/python_types.c): "T().m" is method m of what calling T
 * gives (T read in the calling file's scope: a class, an instance of it; a
 * function, what its result fact says; "=T": a qualified name, a proxy of
 * the row's receiver_proxies); "T().a.b.m" follows attributes a and b
 * through the type facts of each class (IDX_REF_TYPE_FACT, read in the
 * file that states them) or a property's result; "f().m" is m of f's
 * result; "!T().a" an attribute read, a property only (IDX_REF_READ);
 * "super().m" is m as the enclosing class inherits it. A receiver whose
 * type is a library's (its name imported from outside the workspace, or a
 * builtin) calls no workspace method; a call whose receiver's class is not
 * found resolves by the method's name alone, as an untyped receiver does
 * (never an attribute read). A call that reaches a method an interface
 * declares whose implementations need not name it (Go's: the fact
 * IDX_REF_INTERFACE_NAME) reaches the implementations too. */
#include "graph_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A dotted expression resolved as a call written where ref is, by what the
 * name reaches only (never by its last part alone). */
static int64_t type_expr(Resolver *r, const RefRow *at, const char *expr)
{
    RefRow ref = *at;
    ref.id = ref.chunk_id = 0;
    ref.kind = REF_CALL;
    ref.name = (char *)expr;
    ref.strict = 1;
    return idx_graph_resolve_expr(r, &ref);
}

/* Member `name` that the class holding ref's symbol inherits, or 0. */
static int64_t enclosing_inherited(Resolver *r, const RefRow *at, const char *dot, const char *name)
{
    char *cls = xstrndup(at->symbol, (size_t)(dot - at->symbol));
    int64_t v = idx_graph_inherited_member(r, at->file_id, at->module, cls, name);
    free(cls);
    return v;
}

enum { TYPE_DEPTH = 8 };

static int64_t call_class(Resolver *r, const RefRow *at, const char *callee, int *lib, int depth);

/* The TYPE of chunk id's type fact "=NAME:TYPE" (IDX_REF_TYPE_FACT) for
 * name, or NULL. Caller frees. */
static char *type_fact(Resolver *r, int64_t id, const char *name)
{
    size_t n = 0, pre = strlen(IDX_REF_TYPE_FACT), len = strlen(name);
    char *const *v = idx_graph_chunk_refs(r, id, REF_TYPE, &n);
    char *out = NULL;
    for (size_t i = 0; i < n && !out; i++)
        if (!strncmp(v[i], IDX_REF_TYPE_FACT, pre) && !strncmp(v[i] + pre, name, len) &&
            v[i][pre + len] == ':')
            out = xstrdup(v[i] + pre + len + 1);
    return out;
}

/* The class of what calling fact's TYPE gives, read in the file of chunk id
 * (where the fact is written), or 0. */
static int64_t fact_class(Resolver *r, int64_t id, const char *type, int depth)
{
    sqlite3_stmt *s = idx_graph_stmt(r, STMT_CHUNK_GET);
    if (!s) return 0;
    sqlite3_bind_int64(s, 1, id);
    if (!idx_graph_step(r, s)) {
        sqlite3_reset(s);
        return 0;
    }
    RefRow at = {.file_id = sqlite3_column_int64(s, 1), .chunk_id = id, .kind = REF_CALL};
    char *path = idx_store_col_dup(s, 2);
    at.module = idx_store_col_dup(s, 3);
    at.symbol = idx_store_col_dup(s, 4);
    sqlite3_reset(s);
    at.lang = idx_lang_for_file(&r->st->lang_pick, path);
    int lib = 0;
    int64_t c = call_class(r, &at, type, &lib, depth + 1);
    free(path);
    free(at.module);
    free(at.symbol);
    return c;
}

/* The class of what calling chunk t gives: a class, an instance of it; a
 * function or method, what its result fact says; else 0. */
static int64_t result_class(Resolver *r, int64_t t, int depth)
{
    int kind = idx_graph_chunk_kind(r, t);
    if (kind == IDX_KIND_CLASS && depth <= TYPE_DEPTH) {
        /* a type alias (`using A = T;`, `typedef T A;`): the class it names */
        char *alias = type_fact(r, t, "()");
        int64_t c = alias ? fact_class(r, t, alias, depth) : t;
        free(alias);
        return c;
    }
    if (kind == IDX_KIND_CLASS) return t;
    if ((kind != IDX_KIND_FUNCTION && kind != IDX_KIND_METHOD) || depth > TYPE_DEPTH) return 0;
    char *type = type_fact(r, t, "()");
    int64_t c = type ? fact_class(r, t, type, depth) : 0;
    free(type);
    return c;
}

/* The chunk stating the fact "=name:T" of a variable of module's scope
 * (package_vars: on its file's module code, or on the variable's own
 * definition), the first file's by path; 0 for none. The module's facts are
 * read once (a memo entry per name, forgotten with the memo). */
static int64_t module_var_chunk(Resolver *r, const char *module, const char *name, size_t len)
{
    StrBuf k;
    sb_init(&k);
    sb_addf(&k, "\x06%s", module);
    int64_t v = 0;
    if (!strmap_get(&r->memo, k.buf, NULL)) {
        sqlite3_stmt *s = idx_graph_stmt(r, STMT_MODULE_TYPE_FACTS);
        if (s) {
            sqlite3_bind_text(s, 1, module, -1, SQLITE_TRANSIENT);
            sqlite3_bind_int(s, 2, REF_TYPE);
            sqlite3_bind_text(s, 3, IDX_REF_TYPE_FACT, -1, SQLITE_STATIC);
            size_t pre = strlen(IDX_REF_TYPE_FACT);
            while (idx_graph_step(r, s)) {
                const char *fact = (const char *)sqlite3_column_text(s, 1);
                const char *sym = (const char *)sqlite3_column_text(s, 3);
                size_t n = fact ? strcspn(fact + pre, ":.#()") : 0;
                if (!n || fact[pre + n] != ':') continue;
                if (sqlite3_column_int(s, 2) != IDX_KIND_MODULE &&
                    (!sym || strlen(sym) != n || memcmp(sym, fact + pre, n)))
                    continue; /* a class's field, a function's parameter */
                sb_reset(&k);
                sb_addf(&k, "\x06%s\x1f%.*s", module, (int)n, fact + pre);
                if (!strmap_get(&r->memo, k.buf, NULL))
                    strmap_put(&r->memo, k.buf, sqlite3_column_int64(s, 0));
            }
            sqlite3_reset(s);
        }
        sb_reset(&k);
        sb_addf(&k, "\x06%s", module);
        if (r->rc == CR_OK) strmap_put(&r->memo, k.buf, 1);
    }
    sb_reset(&k);
    sb_addf(&k, "\x06%s\x1f%.*s", module, (int)len, name);
    if (!strmap_get(&r->memo, k.buf, &v)) v = 0;
    sb_release(&k);
    return v;
}

/* The class of what variable name[0..len) of at's module scope holds (the
 * fact "=name:T" some file of the module states: package_vars), or 0. A
 * name the file imports is the import's. */
static int64_t module_var_class(Resolver *r, const RefRow *at, const char *name, size_t len,
                                int depth)
{
    if (!at->lang || !at->lang->package_vars || !at->module || depth > TYPE_DEPTH ||
        idx_graph_imported(r, at->file_id, name, len))
        return 0;
    int64_t id = module_var_chunk(r, at->module, name, len);
    if (!id) return 0;
    char *var = xstrndup(name, len);
    char *type = type_fact(r, id, var);
    int64_t v = type ? fact_class(r, id, type, depth) : 0;
    free(type);
    free(var);
    return v;
}

/* Member m of class c, for a call written in at's language. */
static int64_t class_member(Resolver *r, const RefRow *at, int64_t c, const char *m)
{
    if (at->lang && at->lang->out_of_line_members) return idx_graph_member_out_of_line(r, c, m);
    return idx_graph_member(r, c, m);
}

/* The class of attribute a of an instance of class c: a property's result,
 * or what the class (or a base, a few levels up) says the attribute holds. */
static int64_t attr_class_walk(Resolver *r, int64_t c, const char *a, int depth);

static int64_t attr_class(Resolver *r, int64_t c, const char *a, int depth)
{
    if (depth > TYPE_DEPTH) return 0;
    GraphMemo m;
    int64_t v;
    if (idx_graph_memo_held(r, &m, &v, "\x04%lld\x1f%d\x1f%s", (long long)c, depth, a)) return v;
    return idx_graph_memo_keep(r, &m, attr_class_walk(r, c, a, depth));
}

static int64_t attr_class_walk(Resolver *r, int64_t c, const char *a, int depth)
{
    int64_t m = idx_graph_member(r, c, a);
    if (m && idx_graph_chunk_kind(r, m) != IDX_KIND_CLASS) return result_class(r, m, depth + 1);
    char *type = type_fact(r, c, a);
    int64_t v = type ? fact_class(r, c, type, depth) : 0;
    free(type);
    int64_t bases[4];
    size_t nb = type || v ? 0 : idx_graph_base_ids(r, c, bases, 4);
    for (size_t i = 0; i < nb && !v && r->rc == CR_OK; i++)
        v = attr_class(r, bases[i], a, depth + 1);
    return v;
}

/* A class only declared where it is used (`struct Status;`): the one
 * class of the workspace named name outside any other (a class nested in
 * another, `FileReader::Status`, is not what such a declaration names), or 0. */
static int64_t declared_class(Resolver *r, const char *name)
{
    int64_t ids[8];
    size_t n = idx_graph_symbol_ids(r, name, ids, 8);
    int64_t v = 0;
    if (n == 8) return 0; /* maybe more: none rather than some (the same in any order) */
    for (size_t i = 0; i < n && v >= 0 && r->rc == CR_OK; i++) {
        sqlite3_stmt *q = idx_graph_stmt(r, STMT_CHUNK_QUAL);
        if (!q) return 0;
        sqlite3_bind_int64(q, 1, ids[i]);
        const char *sym = idx_graph_step(r, q) ? (const char *)sqlite3_column_text(q, 2) : NULL;
        int top = sym && !strcmp(sym, name);
        sqlite3_reset(q);
        if (top && idx_graph_chunk_kind(r, ids[i]) == IDX_KIND_CLASS) v = v ? -1 : ids[i];
    }
    return v > 0 ? v : 0;
}

/* Where the last "()." of callee is, or NULL. */
static const char *last_open(const char *callee)
{
    const char *open = NULL;
    for (const char *p = strstr(callee, "()."); p; p = strstr(p + 1, "()."))
        open = p;
    return open;
}

/* The class a chain "T().a.m" reaches before its last segment, open its
 * last "().": the class of what calling the part before gives, its
 * attributes walked; *last set to m. 0 (*lib set as call_class sets it) when
 * it reaches none or something else. */
static int64_t chain_class(Resolver *r, const RefRow *at, const char *callee, const char *open,
                           const char **last, int *lib, int depth)
{
    char *inner = xstrndup(callee, (size_t)(open - callee));
    int64_t c = call_class(r, at, inner, lib, depth + 1);
    free(inner);
    const char *seg = open + 3;
    for (const char *dot; c && (dot = strchr(seg, '.')) != NULL; seg = dot + 1) {
        char *a = xstrndup(seg, (size_t)(dot - seg));
        c = attr_class(r, c, a, depth + 1);
        free(a);
    }
    *last = seg;
    return c && idx_graph_chunk_kind(r, c) == IDX_KIND_CLASS ? c : 0;
}

/* The member a chain "T().a.m" names (chain_class's class's m), or 0. */
static int64_t chain_member(Resolver *r, const RefRow *at, const char *callee, const char *open,
                            int *lib, int depth)
{
    const char *m;
    int64_t c = chain_class(r, at, callee, open, &m, lib, depth);
    return c ? class_member(r, at, c, m) : 0;
}

/* The length of callee before a trailing IDX_REF_ARG "K" IDX_REF_ARG "J"
 * (a callback's parameter), or 0 when it has none. */
static size_t arg_base(const char *callee)
{
    size_t n = strlen(callee), i = n, marks = 0;
    while (i > 0 && marks < 2) {
        char c = callee[i - 1];
        if (c == IDX_REF_ARG[0]) {
            if (i == n || (marks == 1 && callee[i] == IDX_REF_ARG[0])) return 0;
            marks++;
        } else if (c < '0' || c > '9') {
            return 0;
        }
        i--;
    }
    return marks == 2 && i > 0 ? i : 0;
}

/* The function or method that calling `callee` calls ("f", "T().m"; a
 * class: its constructor, the row's constructor_name), or 0. */
static int64_t callee_def(Resolver *r, const RefRow *at, const char *callee, int depth)
{
    const char *open = last_open(callee);
    int lib = 0;
    int64_t t = open ? chain_member(r, at, callee, open, &lib, depth) : type_expr(r, at, callee);
    if (t && idx_graph_chunk_kind(r, t) == IDX_KIND_CLASS)
        t = at->lang && at->lang->constructor_name
                ? class_member(r, at, t, at->lang->constructor_name)
                : 0;
    return t;
}

/* The class of an element of the array a callback passed to one of the
 * row's element_methods goes over, as its first parameter ("T[]().forEach"
 * #0#0: a variable declared as an array of T; "C().a.forEach": C's field a
 * declared so), or 0. */
static int64_t element_class(Resolver *r, const RefRow *at, const char *base, const char *arg,
                             int depth)
{
    char first[8];
    snprintf(first, sizeof first, "%s0%s0", IDX_REF_ARG, IDX_REF_ARG);
    const char *m = strrchr(base, '.');
    const char *const *em = at->lang ? at->lang->element_methods : NULL;
    if (strcmp(arg, first) || !m || !em) return 0;
    int known = 0;
    for (; *em && !known; em++)
        known = !strcmp(*em, m + 1);
    const char *open = NULL;
    for (const char *p = strstr(base, "()."); p && p < m; p = strstr(p + 1, "()."))
        open = p;
    if (!known || !open) return 0;
    size_t el = strlen(IDX_REF_ELEM);
    int lib = 0;
    int64_t c = 0, owner = 0;
    char *type = NULL;
    if (open + 2 == m) { /* a variable: its declared type */
        type = xstrndup(base, (size_t)(open - base));
    } else { /* a field's: the attributes before the last walked, its fact read */
        char *inner = xstrndup(base, (size_t)(open - base));
        c = call_class(r, at, inner, &lib, depth + 1);
        free(inner);
        const char *seg = open + 3;
        for (const char *dot; c && (dot = strchr(seg, '.')) != NULL && dot < m; seg = dot + 1) {
            char *a = xstrndup(seg, (size_t)(dot - seg));
            c = attr_class(r, c, a, depth + 1);
            free(a);
        }
        if (c && seg < m) {
            char *a = xstrndup(seg, (size_t)(m - seg));
            type = type_fact(r, c, a);
            owner = c;
            free(a);
        }
    }
    size_t n = type ? strlen(type) : 0;
    int64_t v = 0;
    if (n > el && !strcmp(type + n - el, IDX_REF_ELEM)) {
        type[n - el] = 0;
        v = owner ? fact_class(r, owner, type, depth) : call_class(r, at, type, &lib, depth + 1);
    }
    free(type);
    return v;
}

/* The class of an item of what calling `callee` gives ("f", "T().m"): the
 * items fact (IDX_REF_ITEMS) of the function, else that of the class of
 * its result (or of the class called), or 0 (*lib set as call_class sets it). */
static int64_t items_class(Resolver *r, const RefRow *at, const char *callee, int *lib, int depth)
{
    const char *open = last_open(callee);
    int64_t t = 0;
    if (open) {
        t = chain_member(r, at, callee, open, lib, depth);
    } else if (callee[0] == '=') {
        t = idx_graph_resolve_qualified(r, callee + 1, 0);
        *lib = !t;
    } else {
        t = type_expr(r, at, callee);
        size_t root = strcspn(callee, ".");
        char *name = xstrndup(callee, root);
        *lib = !t && (idx_graph_imported(r, at->file_id, callee, root) ||
                      idx_graph_is_builtin(at->lang, name));
        free(name);
    }
    if (!t) return 0;
    char *type = type_fact(r, t, IDX_REF_ITEMS);
    int64_t c = 0;
    if (type) {
        c = fact_class(r, t, type, depth);
    } else if (idx_graph_chunk_kind(r, t) != IDX_KIND_CLASS &&
               (c = result_class(r, t, depth + 1)) != 0) {
        type = type_fact(r, c, IDX_REF_ITEMS);
        c = type ? fact_class(r, c, type, depth) : 0;
    }
    free(type);
    return c;
}

/* Whether member name m is an operator's ("operator==", "operator[]"). */
static int operator_name(const char *m)
{
    return !strncmp(m, "operator", 8) && m[8] && m[8] != '_' && !isalnum((unsigned char)m[8]);
}

/* Whether name is one of the row's builtin_objects (C++'s `std`): a type
 * under it is a library's. */
static int builtin_object(const IdxLang *lang, const char *name)
{
    for (const char *const *b = lang ? lang->builtin_objects : NULL; b && *b; b++)
        if (!strcmp(*b, name)) return 1;
    return 0;
}

/* Whether name is the class of method symbol ("A.B.f": B), as a
 * constructor is named. */
static int own_class_name(const char *symbol, const char *name)
{
    const char *end = strrchr(symbol, '.');
    if (!end) return 0;
    const char *start = end;
    while (start > symbol && start[-1] != '.')
        start--;
    return (size_t)(end - start) == strlen(name) && !memcmp(start, name, strlen(name));
}

/* The class of what calling `callee` gives, written where ref is ("T", "f",
 * "=q.T", "T().f", "T().a.f"; "f#K#J": a parameter of a callback passed to
 * f; "f()[]": an item of what f gives), or 0 with *lib set when it is a
 * library's (or a builtin's). */
static int64_t call_class(Resolver *r, const RefRow *at, const char *callee, int *lib, int depth)
{
    *lib = 0;
    if (depth > TYPE_DEPTH) return 0;
    size_t base = arg_base(callee);
    if (base) {
        /* what the function called declares of its callback's parameter */
        char *f = xstrndup(callee, base);
        int64_t t = callee_def(r, at, f, depth + 1);
        char *type = t ? type_fact(r, t, callee + base) : NULL;
        int64_t c = type ? fact_class(r, t, type, depth) : 0;
        if (!t) c = element_class(r, at, f, callee + base, depth + 1);
        free(f);
        free(type);
        return c;
    }
    size_t len = strlen(callee), items = strlen("()" IDX_REF_ITEMS);
    if (len > items && !strcmp(callee + len - items, "()" IDX_REF_ITEMS)) {
        char *inner = xstrndup(callee, len - items);
        int64_t c = items_class(r, at, inner, lib, depth + 1);
        free(inner);
        return c;
    }
    const char *open = last_open(callee);
    if (open) {
        /* a method (through attributes) of a call's result */
        const char *seg;
        int64_t c = chain_class(r, at, callee, open, &seg, lib, depth);
        if (!c) return 0;
        int64_t m = class_member(r, at, c, seg);
        /* no method of the name: a field's (`const q = this.queryCache`) */
        return m ? result_class(r, m, depth + 1) : attr_class(r, c, seg, depth + 1);
    }
    if (callee[0] == '=') {
        int64_t t = idx_graph_resolve_qualified(r, callee + 1, 0);
        *lib = !t;
        return t ? result_class(r, t, depth + 1) : 0;
    }
    const char *last = strrchr(callee, '.');
    int64_t t = 0;
    RefRow self = *at;
    self.kind = REF_CALL;
    self.name = (char *)callee;
    int own = at->lang && at->lang->out_of_line_members && at->symbol;
    if (own && !last && !own_class_name(at->symbol, callee))
        t = idx_graph_class_call(r, &self); /* `impl()->f()` in a method: its class's member */
    if (!t) t = type_expr(r, at, callee);
    if (!t && own && last) t = idx_graph_class_call(r, &self); /* `Class::f()`: a static member */
    if (!t && at->lang && at->lang->out_of_line_members && !last) t = declared_class(r, callee);
    if (!t && at->lang && at->lang->out_of_line_members && last && last[1]) {
        /* a class named through its namespace where only declared
         * (`internal::Impl* impl();` beside `namespace internal { class
         * Impl; }`): a namespace is no part of a class's name here, so the
         * one top-level class of the last name; never under a library's
         * namespace (`std::string`) */
        char *root = xstrndup(callee, strcspn(callee, "."));
        int outside = idx_graph_is_builtin(at->lang, root) || builtin_object(at->lang, root) ||
                      idx_graph_imported(r, at->file_id, callee, strlen(root));
        if (!outside) t = declared_class(r, last + 1);
        /* a function named through its namespace (`internal::Impl()->f()`):
         * the function its name reaches where the namespace is no class */
        char *scope = xstrndup(callee, (size_t)(last - callee));
        if (!t && !outside && !type_expr(r, at, scope)) t = type_expr(r, at, last + 1);
        free(scope);
        free(root);
    }
    if (t) return result_class(r, t, depth + 1);
    size_t root = strcspn(callee, ".");
    if (!callee[root]) {
        int64_t c = module_var_class(r, at, callee, root, depth + 1);
        if (c) return c;
    }
    char *name = xstrndup(callee, root);
    /* (`std::ostringstream ss; ss.str()`: a library's type right under a
     * builtin_objects namespace, never a workspace method of the name; a
     * member type of a library's template, `std::vector<T>::iterator`,
     * stays unknown: its element may be a workspace class) */
    *lib = idx_graph_imported(r, at->file_id, callee, root) ||
           idx_graph_is_builtin(at->lang, name) ||
           (callee[root] && !strchr(callee + root + 1, '.') && builtin_object(at->lang, name));
    free(name);
    return 0;
}

int idx_graph_typed(Resolver *r, const RefRow *at, int64_t *out)
{
    const char *name = at->name;
    *out = 0;
    /* a type fact: read by the calls it types, no edge of its own */
    if (at->kind == REF_TYPE && !strncmp(name, IDX_REF_TYPE_FACT, strlen(IDX_REF_TYPE_FACT)))
        return 1;
    /* a call a macro's body makes is typed as a call (chunk_ts_types.c) */
    if (at->kind != REF_CALL && at->kind != REF_EXPAND) return 0;
    if (!strncmp(name, IDX_REF_SUPER, IDX_REF_SUPER_LEN)) {
        const char *m = name + IDX_REF_SUPER_LEN, *dot = strrchr(at->symbol, '.');
        if (!*m || strchr(m, '.') || !dot) return 1;
        *out = enclosing_inherited(r, at, dot, m);
        return 1;
    }
    if (!strncmp(name, IDX_REF_CLASS, IDX_REF_CLASS_LEN)) { /* `self.name` read: a method only */
        const char *m = name + IDX_REF_CLASS_LEN, *dot = strrchr(at->symbol, '.');
        if (!*m || strchr(m, '.') || !dot) return 1;
        StrBuf q;
        sb_init(&q);
        if (at->module[0]) sb_addf(&q, "%s.", at->module);
        sb_add(&q, at->symbol, (size_t)(dot - at->symbol));
        sb_addf(&q, ".%s", m);
        int64_t v = idx_graph_resolve_qualified(r, q.buf, 0);
        sb_release(&q);
        if (!v) v = enclosing_inherited(r, at, dot, m);
        if (v && idx_graph_chunk_kind(r, v) == IDX_KIND_METHOD) *out = v;
        return 1;
    }
    /* an attribute read through a typed receiver: a property only */
    size_t pre = strlen(IDX_REF_READ);
    int read = !strncmp(name, IDX_REF_READ, pre);
    if (read) name += pre;
    const char *open = NULL;
    for (const char *p = strstr(name, "()."); p; p = strstr(p + 1, "()."))
        open = p;
    if (!open && !read) {
        /* `X.m()` with X a variable of the module's scope (package_vars):
         * m of what X holds (a receiver of a workspace class whose method
         * is not found links nothing) */
        size_t root = strcspn(name, ".");
        if (!name[root] || strchr(name + root + 1, '.')) return 0;
        int64_t c = module_var_class(r, at, name, root, 0);
        if (c && idx_graph_chunk_kind(r, c) == IDX_KIND_CLASS) {
            *out = class_member(r, at, c, name + root + 1);
            return 1;
        }
        return 0;
    }
    if (!open) return read;
    /* "T().a.b.m": m of what attribute b of attribute a of a T holds */
    char *callee = xstrndup(name, (size_t)(open - name));
    int lib = 0;
    int64_t c = call_class(r, at, callee, &lib, 0);
    free(callee);
    if (lib) return 1;
    const char *m = open + 3;
    for (const char *dot; c && (dot = strchr(m, '.')) != NULL; m = dot + 1) {
        char *a = xstrndup(m, (size_t)(dot - m));
        c = attr_class(r, c, a, 1);
        free(a);
    }
    if (strchr(m, '.')) return 1; /* an attribute of no known class */
    if (c && idx_graph_chunk_kind(r, c) == IDX_KIND_CLASS)
        *out = class_member(r, at, c, m);
    else if (!read && !idx_graph_builtin_method(at->lang, m) && !operator_name(m))
        *out = idx_graph_unique_by_name(r, m); /* (an operator of a type not found: built in) */
    if (read && *out) {
        char *prop =
            idx_graph_chunk_kind(r, *out) == IDX_KIND_METHOD ? type_fact(r, *out, "@") : NULL;
        if (!prop) *out = 0;
        free(prop);
    }
    return 1;
}

enum { IMPL_SCAN = 64 };

/* Whether class chunk c is an interface its implementations need not name. */
static int implicit_interface(Resolver *r, int64_t c)
{
    char *t = type_fact(r, c, IDX_REF_INTERFACE_NAME);
    free(t);
    return t != NULL;
}

/* The names of the methods class chunk c declares itself. Caller frees
 * (idx_graph_free_strv). */
static char **own_methods(Resolver *r, int64_t c, size_t *n)
{
    *n = 0;
    sqlite3_stmt *s = idx_graph_stmt(r, STMT_CHUNK_QUAL);
    if (!s) return NULL;
    sqlite3_bind_int64(s, 1, c);
    StrBuf q;
    sb_init(&q);
    if (idx_graph_step(r, s)) {
        const char *mod = (const char *)sqlite3_column_text(s, 1);
        if (mod && mod[0]) sb_addf(&q, "%s.", mod);
        sb_adds(&q, (const char *)sqlite3_column_text(s, 2));
    }
    sqlite3_reset(s);
    char **v = NULL;
    s = q.len ? idx_graph_stmt(r, STMT_SYMBOL_NAMES_UNDER) : NULL;
    if (s) {
        sqlite3_bind_text(s, 1, q.buf, (int)q.len, SQLITE_STATIC);
        v = idx_graph_text_rows(r, s, n);
    }
    sb_release(&q);
    return v;
}

#define IFACE_FACT IDX_REF_TYPE_FACT IDX_REF_INTERFACE_NAME ":" IDX_REF_INTERFACE_NAME

void idx_graph_implementations_forget(Resolver *r)
{
    free(r->iface_decls);
    r->iface_decls = NULL;
    r->n_iface_decls = 0;
    r->ifaces_read = 0;
    strmap_release(&r->impl_of);
    strmap_init(&r->impl_of);
    free(r->impl_v);
    r->impl_v = NULL;
    r->n_impl_v = r->cap_impl_v = 0;
}

static int cmp_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Whether chunk id is a method an implicit interface declares (the list
 * read once: a workspace without such an interface pays one probe). */
static int iface_decl(Resolver *r, int64_t id)
{
    if (!r->ifaces_read) {
        r->ifaces_read = 1;
        sqlite3_stmt *s = idx_graph_stmt(r, STMT_REF_LAST_ANY);
        if (!s) return 0;
        sqlite3_bind_text(s, 1, IFACE_FACT, -1, SQLITE_STATIC);
        int any = idx_graph_step(r, s);
        sqlite3_reset(s);
        s = any ? idx_graph_stmt(r, STMT_METHODS_OF_FACT) : NULL;
        if (s) {
            size_t cap = 0;
            sqlite3_bind_text(s, 1, IFACE_FACT, -1, SQLITE_STATIC);
            sqlite3_bind_int(s, 2, IDX_KIND_METHOD);
            while (idx_graph_step(r, s)) {
                ARRAY_GROW(r->iface_decls, r->n_iface_decls + 1, cap);
                r->iface_decls[r->n_iface_decls++] = sqlite3_column_int64(s, 0);
            }
            sqlite3_reset(s);
        }
    }
    return r->n_iface_decls &&
           bsearch(&id, r->iface_decls, r->n_iface_decls, sizeof id, cmp_id) != NULL;
}

static size_t implementations(Resolver *r, int64_t decl, int64_t *out, size_t max);

size_t idx_graph_implementations(Resolver *r, int64_t decl, int64_t *out, size_t max)
{
    if (!iface_decl(r, decl)) return 0;
    char key[24];
    snprintf(key, sizeof key, "%lld", (long long)decl);
    int64_t at;
    if (!strmap_get(&r->impl_of, key, &at)) {
        int64_t v[DISPATCH_MAX];
        size_t n = implementations(r, decl, v, DISPATCH_MAX - 1);
        if (r->rc) return 0;
        ARRAY_GROW(r->impl_v, r->n_impl_v + n + 1, r->cap_impl_v);
        at = (int64_t)r->n_impl_v << 8 | (int64_t)n;
        memcpy(r->impl_v + r->n_impl_v, v, n * sizeof *v);
        r->n_impl_v += n;
        strmap_put(&r->impl_of, key, at);
    }
    size_t n = (size_t)(at & 0xff);
    if (n > max) n = max;
    memcpy(out, r->impl_v + (at >> 8), n * sizeof *out);
    return n;
}

/* The implementations of decl, looked up (idx_graph_implementations). */
static size_t implementations(Resolver *r, int64_t decl, int64_t *out, size_t max)
{
    sqlite3_stmt *s = idx_graph_stmt(r, STMT_CHUNK_GET);
    if (!s) return 0;
    sqlite3_bind_int64(s, 1, decl);
    int64_t iface = 0;
    char *name = NULL;
    if (idx_graph_step(r, s) && sqlite3_column_int(s, 10) == IDX_KIND_METHOD) {
        iface = sqlite3_column_int64(s, 11);
        const char *sym = (const char *)sqlite3_column_text(s, 4);
        const char *dot = sym ? strrchr(sym, '.') : NULL;
        name = dot ? xstrdup(dot + 1) : NULL;
    }
    sqlite3_reset(s);
    size_t k = 0, n = 0, nm = 0;
    int64_t chunk[IMPL_SCAN + 1], cls[IMPL_SCAN + 1];
    char **names = NULL;
    if (!name || !iface || !implicit_interface(r, iface)) goto out;
    /* by qualified name: a type's methods may be defined in another file
     * than the type (no parent chunk) */
    s = idx_graph_stmt(r, STMT_METHOD_QUALS_BY_NAME);
    if (!s) goto out;
    sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_int(s, 2, IDX_KIND_METHOD);
    sqlite3_bind_int(s, 3, IMPL_SCAN + 1);
    char *qual[IMPL_SCAN + 1];
    while (n <= IMPL_SCAN && idx_graph_step(r, s)) {
        chunk[n] = sqlite3_column_int64(s, 0);
        qual[n++] = idx_store_col_dup(s, 1);
    }
    sqlite3_reset(s);
    for (size_t j = 0; j < n; j++) {
        char *dot = strrchr(qual[j], '.');
        if (dot) *dot = '\0';
        cls[j] = dot && n <= IMPL_SCAN ? idx_graph_symbol_by_qual(r, qual[j]) : 0;
        free(qual[j]);
    }
    if (n > IMPL_SCAN) goto out;
    names = own_methods(r, iface, &nm);
    for (size_t j = 0; j < n && r->rc == CR_OK; j++) {
        if (!cls[j] || cls[j] == iface || chunk[j] == decl ||
            idx_graph_chunk_kind(r, cls[j]) != IDX_KIND_CLASS || implicit_interface(r, cls[j]))
            continue;
        size_t i = 0;
        while (i < nm && idx_graph_member(r, cls[j], names[i]))
            i++;
        if (i < nm) continue;
        if (k == max) { /* more than max: none rather than a few (the same set in any order) */
            k = 0;
            break;
        }
        out[k++] = chunk[j];
    }
out:
    idx_graph_free_strv(names, nm);
    free(name);
    return r->rc ? 0 : k;
}

int64_t idx_graph_field_class(Resolver *r, const RefRow *at)
{
    const char *cls_end = at->symbol ? strrchr(at->symbol, '.') : NULL;
    if (!cls_end || strchr(at->name, '.') || !at->lang) return 0;
    char *cls = xstrndup(at->symbol, (size_t)(cls_end - at->symbol));
    int64_t c = type_expr(r, at, cls);
    if (!c) c = declared_class(r, cls);
    free(cls);
    if (!c || idx_graph_chunk_kind(r, c) != IDX_KIND_CLASS) return 0;
    int64_t v = attr_class(r, c, at->name, 0);
    return v && idx_graph_chunk_kind(r, v) == IDX_KIND_CLASS ? v : 0;
}

int64_t idx_graph_class_call(Resolver *r, const RefRow *at)
{
    const char *name = at->name, *dot = strchr(name, '.');
    if (at->kind != REF_CALL || !at->lang || !at->lang->out_of_line_members || strchr(name, '(') ||
        name[0] == '?' || (dot && strchr(dot + 1, '.')))
        return 0;
    int64_t c = 0;
    if (!dot) {
        /* a bare call in a method: a member of its class first */
        const char *cls_end =
            at->lang->implicit_this && at->symbol ? strrchr(at->symbol, '.') : NULL;
        if (!cls_end) return 0;
        StrBuf q;
        sb_init(&q);
        if (at->module[0]) sb_addf(&q, "%s.", at->module);
        sb_add(&q, at->symbol, (size_t)(cls_end - at->symbol));
        c = idx_graph_resolve_qualified(r, q.buf, 0);
        sb_release(&q);
    } else {
        /* `Class::f()`: a static member */
        char *cls = xstrndup(name, (size_t)(dot - name));
        c = type_expr(r, at, cls);
        if (!c && !idx_lang_self_word(at->lang, cls, strlen(cls))) c = declared_class(r, cls);
        free(cls);
    }
    if (!c || idx_graph_chunk_kind(r, c) != IDX_KIND_CLASS ||
        idx_graph_chunk_lang(r, c) != at->lang)
        return 0;
    int64_t m = class_member(r, at, c, dot ? dot + 1 : name);
    return m && idx_graph_chunk_lang(r, m) == at->lang ? m : 0;
}

int idx_graph_field_call(Resolver *r, const RefRow *at, int64_t *out)
{
    *out = 0;
    const char *name = at->name, *dot = strrchr(name, '.');
    const char *cls_end = at->symbol ? strrchr(at->symbol, '.') : NULL;
    if (at->kind != REF_CALL || !at->lang || !at->lang->implicit_this || !dot || !dot[1] ||
        strchr(name, '(') || name[0] == '?' || !cls_end)
        return 0;
    StrBuf q;
    sb_init(&q);
    if (at->module[0]) sb_addf(&q, "%s.", at->module);
    sb_add(&q, at->symbol, (size_t)(cls_end - at->symbol));
    int64_t cls = idx_graph_resolve_qualified(r, q.buf, 0);
    sb_release(&q);
    if (!cls || idx_graph_chunk_kind(r, cls) != IDX_KIND_CLASS) return 0;
    /* each field through the class the one before holds (`state_.bindings_.m`) */
    int64_t c = cls;
    for (const char *p = name; c && p < dot && r->rc == CR_OK;) {
        const char *e = strchr(p, '.');
        char *field = xstrndup(p, (size_t)(e - p));
        c = attr_class(r, c, field, 1);
        free(field);
        if (c && idx_graph_chunk_kind(r, c) != IDX_KIND_CLASS) c = 0;
        p = e + 1;
    }
    if (!c) return 0;
    /* a class of the workspace that has no such member (a pure virtual
     * method, one a library base defines): no match by the name alone, as
     * with a typed receiver ("T().m") */
    *out = class_member(r, at, c, dot + 1);
    return 1;
}

#define ANCESTOR_METHODS                                                                           \
    "WITH RECURSIVE anc(id) AS (SELECT ?1 UNION SELECT ?2 UNION SELECT e.dst FROM edges e "        \
    "JOIN anc ON e.src = anc.id WHERE e.kind = ?3) "                                               \
    "UPDATE refs SET resolved = 0 WHERE resolved = 1 AND kind = ?4 AND last IN "                   \
    "(SELECT c.name FROM chunks c WHERE c.parent_id IN anc AND c.parent_id != 0)"

CrErr idx_graph_types_any_resolved(IdxStore *st, int *out, ErrInfo *e)
{
    sqlite3_stmt *s = NULL;
    *out = 0;
    if (sqlite3_prepare_v2(st->db, "SELECT 1 FROM refs WHERE resolved = 1 AND kind = ?1 LIMIT 1",
                           -1, &s, NULL) != SQLITE_OK)
        return idx_store_err(st, e, "typed receivers");
    sqlite3_bind_int(s, 1, REF_CALL);
    CrErr rc = idx_store_step(st, s, out, e, "typed receivers");
    sqlite3_finalize(s);
    return rc;
}

CrErr idx_graph_types_mark(IdxStore *st, int64_t was, int64_t now, ErrInfo *e)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db, ANCESTOR_METHODS, -1, &s, NULL) != SQLITE_OK)
        return idx_store_err(st, e, "typed receivers");
    sqlite3_bind_int64(s, 1, was);
    sqlite3_bind_int64(s, 2, now);
    sqlite3_bind_int(s, 3, IDX_EDGE_INHERIT);
    sqlite3_bind_int(s, 4, REF_CALL);
    CrErr rc = idx_store_step_done(st, s, e, "typed receivers");
    sqlite3_finalize(s);
    return rc;
}
