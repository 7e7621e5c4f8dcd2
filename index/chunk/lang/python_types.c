/* python_types.c - a light, local type inference for the receivers of
 * Python calls, so that the resolver (graph_types.c) can follow them:
 *
 *   self.h = Headers(...)   (any method)    self.h.get()    -> "Headers().get"
 *   h: Headers              (class body)    self.h.get()    -> "Headers().get"
 *   def f(h: Optional[Headers]) / h = Headers()   h.get()   -> "Headers().get"
 *   app = Flask(__name__)   (module level)  app.route()     -> "Flask().route"
 *   m = re.match(...)                       m.group()       -> "re.match().group"
 *   from flask import current_app           current_app.x() -> "=flask.Flask().x"
 *
 * A receiver's type is the callee of the call it was assigned from, or its
 * annotation, written as in the file (the resolver reads it in the file's
 * scope); "=" marks a qualified name from the row's receiver_proxies. A
 * name assigned two different things (or something that is no call) has
 * no type. Nothing leaves the file: the rewrite is a function of the
 * file's text, so incremental updates see it as they see any reference. */
#include "python_int.h"

#include <stdlib.h>

/* Notes name[0..len)'s item class ("name[]": no identifier) from its
 * annotation's squeezed text, when it is a container of one. */
static void note_items(PyTypes *t, int scope, int attr, const char *name, size_t len,
                       const char *ann, size_t ann_len);

/* The class a function of this file (parent -2: a module-level one; else
 * a method of class unit `parent`) named name returns (idx_py_return_type),
 * into t->t: 1, or 0 for none. */
static int returned_type(ChunkRun *r, PyTypes *t, int parent, const char *name)
{
    for (size_t i = 0; i < r->n_units; i++) {
        const ChunkUnit *u = &r->units[i];
        int where = u->kind == IDX_KIND_FUNCTION ? -2 : u->kind == IDX_KIND_METHOD ? u->parent : -3;
        if (where == parent && !strcmp(u->name, name)) return idx_py_return_type(r, u, &t->t);
    }
    return 0;
}

/* The type an assignment in unit `scope` (-1: the module) gives its target:
 * 2 its annotation (-1: one naming no class), 1 the callee of the call it
 * assigns (a plain chain) or the type of the variable it assigns, 0 none.
 * Into t->t. */
static int assigned_type(ChunkRun *r, PyTypes *t, TSNode asg, int scope)
{
    const ChunkSyms *sy = r->sy;
    TSNode ty = ts_node_child_by_field_id(asg, sy->f_type);
    if (!ts_node_is_null(ty)) {
        StrBuf raw;
        sb_init(&raw);
        idx_py_squeezed(r, ty, &raw);
        int ok = idx_py_annotation_type(raw.buf ? raw.buf : "", raw.len, &t->t);
        sb_release(&raw);
        return ok ? 2 : -1;
    }
    TSNode rhs = ts_node_child_by_field_id(asg, sy->f_right);
    if (ts_node_is_null(rhs)) return 0;
    if (ts_node_symbol(rhs) == sy->identifier) { /* another variable's type */
        uint32_t a = ts_node_start_byte(rhs), b = ts_node_end_byte(rhs);
        const PyVar *v = NULL;
        for (int s = scope; s >= 0 && !v; s = r->units[s].parent)
            if (r->units[s].kind != IDX_KIND_CLASS) v = idx_py_var_get(t, s, 0, r->src + a, b - a);
        if (!v && b > a) v = idx_py_var_get(t, -1, 0, r->src + a, b - a);
        if (!v || !v->type) return 0;
        sb_reset(&t->t);
        sb_adds(&t->t, v->type);
        return 1;
    }
    if (idx_py_mapping_value(r, t, rhs, scope)) return 1;
    if (ts_node_symbol(rhs) != sy->call) return 0;
    TSNode fn = ts_node_child_by_field_id(rhs, sy->f_function);
    if (ts_node_is_null(fn)) return 0;
    idx_py_squeezed(r, fn, &t->t);
    /* `cast(X, v)`, `t.cast("X", v)`: an X */
    if ((t->t.len == 4 || (t->t.len > 4 && t->t.buf[t->t.len - 5] == '.')) &&
        !memcmp(t->t.buf + t->t.len - 4, "cast", 4)) {
        TSNode args = ts_node_child_by_field_id(rhs, sy->f_arguments);
        if (ts_node_is_null(args) || ts_node_named_child_count(args) != 2) return 0;
        StrBuf raw;
        sb_init(&raw);
        idx_py_squeezed(r, ts_node_named_child(args, 0), &raw);
        int ok = idx_py_annotation_type(raw.buf ? raw.buf : "", raw.len, &t->t);
        sb_release(&raw);
        return ok ? 2 : -1;
    }
    /* `make()`, `self.make()`: what this file's make says it returns */
    int self = t->t.len > 5 && !memcmp(t->t.buf, "self.", 5);
    int cls = scope >= 0 && r->units[scope].kind == IDX_KIND_METHOD ? r->units[scope].parent : -1;
    /* `k(...)`, `self.k(...)` with k a class held in a variable (`k:
     * Type[X]`, `k = X` in a class body): an X */
    const char *callee = t->t.buf ? t->t.buf + (self ? 5 : 0) : "";
    const PyVar *k = NULL;
    if (self && cls >= 0) k = idx_py_var_get(t, cls, 1, callee, strlen(callee));
    for (int s = scope; !self && s >= 0 && !k; s = r->units[s].parent)
        if (r->units[s].kind != IDX_KIND_CLASS) k = idx_py_var_get(t, s, 0, callee, strlen(callee));
    if (!self && !k) k = idx_py_var_get(t, -1, 0, callee, strlen(callee));
    if (k && k->type && k->type[0] == '@') {
        char *x = xstrdup(k->type + 1);
        sb_reset(&t->t);
        sb_adds(&t->t, x);
        free(x);
        return 1;
    }
    if (self || !strchr(t->t.buf ? t->t.buf : "", '.')) {
        char *name = xstrdup(t->t.buf ? t->t.buf + (self ? 5 : 0) : "");
        int got = returned_type(r, t, self ? cls : -2, name);
        if (!got && self && cls >= 0 && strchr(name, '.')) {
            /* `self.headers.copy()`: read off the class's attribute by the resolver */
            sb_reset(&t->t);
            sb_addf(&t->t, "%s().%s", r->units[cls].symbol, name);
            got = 1;
        }
        free(name);
        if (got || self) return got;
    }
    if (t->t.len > 4 && !memcmp(t->t.buf, "cls.", 4)) return 0;
    return idx_py_is_chain(t->t.buf ? t->t.buf : "", t->t.len);
}

/* t->t ("app.create_url_adapter") with its root replaced by the type of the
 * variable of that name in unit scope or the module, a few times over
 * ("Flask().create_url_adapter"): an attribute's type is read in other
 * methods, where the assigning method's variables are not. */
static void root_typed(ChunkRun *r, PyTypes *t, int scope)
{
    const PyVar *last = NULL;
    for (int depth = 0; depth < 3 && t->t.buf; depth++) {
        size_t root = strcspn(t->t.buf, ".(");
        if (t->t.buf[root] != '.') return;
        const PyVar *w = NULL;
        for (int s = scope; s >= 0 && !w; s = r->units[s].parent)
            if (r->units[s].kind != IDX_KIND_CLASS) w = idx_py_var_get(t, s, 0, t->t.buf, root);
        if (!w) w = idx_py_var_get(t, -1, 0, t->t.buf, root);
        if (!w || !w->type || w == last) return;
        char *rest = xstrdup(t->t.buf + root);
        sb_reset(&t->t);
        if (w->type[0] == '@')
            sb_addf(&t->t, "%s%s", w->type + 1, rest);
        else
            sb_addf(&t->t, "%s()%s", w->type, rest);
        free(rest);
        last = w;
    }
}

/* One assignment seen in a scope: `name = ...` (a variable of scope), or
 * `self.name = ...` inside a method (an attribute of its class). */
static void note_assignment(ChunkRun *r, PyTypes *t, TSNode asg, int scope, int cls, int top)
{
    const ChunkSyms *sy = r->sy;
    TSNode lhs = ts_node_child_by_field_id(asg, sy->f_left);
    if (ts_node_is_null(lhs)) return;
    /* `x = x.m(...)`: a fluent method (`rv = rv.make_conditional()`) keeps x's type */
    TSNode rhs0 = ts_node_child_by_field_id(asg, sy->f_right);
    TSNode f = ts_node_is_null(rhs0) || ts_node_symbol(rhs0) != sy->call
                   ? (TSNode){0}
                   : ts_node_child_by_field_id(rhs0, sy->f_function);
    if (!ts_node_is_null(f) && ts_node_symbol(f) == sy->attribute &&
        ts_node_symbol(lhs) == sy->identifier) {
        while (!ts_node_is_null(f) && ts_node_symbol(f) == sy->attribute)
            f = ts_node_child_by_field_id(f, sy->f_object);
        uint32_t a = ts_node_start_byte(lhs), b = ts_node_end_byte(lhs);
        uint32_t fa = ts_node_is_null(f) ? 0 : ts_node_start_byte(f);
        if (!ts_node_is_null(f) && ts_node_symbol(f) == sy->identifier &&
            ts_node_end_byte(f) - fa == b - a && !memcmp(r->src + fa, r->src + a, b - a))
            return;
    }
    TSSymbol s = ts_node_symbol(lhs);
    if (s != sy->identifier && s != sy->attribute) { /* `a, b = ...`: no tail for a, b */
        uint32_t k = ts_node_named_child_count(lhs);
        for (uint32_t i = 0; i < k; i++) {
            TSNode e = ts_node_named_child(lhs, i);
            uint32_t a = ts_node_start_byte(e), b = ts_node_end_byte(e);
            if (ts_node_symbol(e) == sy->identifier && b <= r->len)
                idx_py_var_tail(t, scope, r->src + a, b - a, NULL, py_node_line(asg));
        }
        return;
    }
    int typed = assigned_type(r, t, asg, scope);
    if (typed == 1 && s == sy->attribute) root_typed(r, t, scope);
    const char *type = typed > 0 ? t->t.buf : NULL;
    int declared = typed == 2 || typed == -1;
    if (s == sy->identifier) {
        uint32_t a = ts_node_start_byte(lhs), b = ts_node_end_byte(lhs);
        if (b > a && b <= r->len) {
            idx_py_var_put(t, scope, 0, r->src + a, b - a, type, declared);
            idx_py_var_tail(t, scope, r->src + a, b - a, top ? type : NULL,
                            ts_node_end_point(asg).row + 1);
        }
    } else if (s == sy->attribute && cls >= 0) {
        TSNode obj = ts_node_child_by_field_id(lhs, sy->f_object);
        TSNode at = ts_node_child_by_field_id(lhs, sy->f_attribute);
        if (ts_node_is_null(obj) || ts_node_is_null(at) || ts_node_symbol(obj) != sy->identifier)
            return;
        uint32_t oa = ts_node_start_byte(obj), ob = ts_node_end_byte(obj);
        if (ob - oa != 4 || memcmp(r->src + oa, "self", 4) != 0) return;
        uint32_t a = ts_node_start_byte(at), b = ts_node_end_byte(at);
        if (b > a && b <= r->len) idx_py_var_put(t, cls, 1, r->src + a, b - a, type, declared);
        TSNode ty = ts_node_child_by_field_id(asg, sy->f_type);
        if (b > a && b <= r->len && !ts_node_is_null(ty)) { /* self.d: Dict[str, X] = {} */
            StrBuf raw;
            sb_init(&raw);
            idx_py_squeezed(r, ty, &raw);
            note_items(t, cls, 1, r->src + a, b - a, raw.buf ? raw.buf : "", raw.len);
            sb_release(&raw);
        }
        /* self.rules = rules, rules: Iterable[Rule]: its items (or values) too */
        TSNode rhs = ts_node_child_by_field_id(asg, sy->f_right);
        if (b > a && b <= r->len && !ts_node_is_null(rhs) &&
            ts_node_symbol(rhs) == sy->identifier) {
            uint32_t ra = ts_node_start_byte(rhs), rb = ts_node_end_byte(rhs);
            StrBuf k;
            sb_init(&k);
            sb_add(&k, r->src + ra, rb - ra);
            sb_adds(&k, "[]");
            const PyVar *v = idx_py_var_get(t, scope, 0, k.buf, k.len);
            sb_reset(&k);
            sb_add(&k, r->src + a, b - a);
            sb_adds(&k, "[]");
            if (v && v->type) idx_py_var_put(t, cls, 1, k.buf, k.len, v->type, 0);
            /* and a mapping's values (`mapping: Mapping[str, Loader]`) */
            sb_reset(&k);
            sb_add(&k, r->src + ra, rb - ra);
            sb_adds(&k, "{}");
            v = idx_py_var_get(t, scope, 0, k.buf, k.len);
            sb_reset(&k);
            sb_add(&k, r->src + a, b - a);
            sb_adds(&k, "{}");
            if (v && v->type) idx_py_var_put(t, cls, 1, k.buf, k.len, v->type, 0);
            sb_release(&k);
        }
    }
}

/* `for x in f(...)` (a statement or a comprehension's clause): x is an
 * item of what f returns ("f()[]", read by the resolver from f's items fact). */
/* `for v in m.values()`, `for k, v in m.items()` with m's values of a
 * known class (idx_py_values_of): v is one. 1 when the loop is one of those. */
static int note_values_loop(ChunkRun *r, PyTypes *t, TSNode lhs, TSNode rhs, int scope)
{
    const ChunkSyms *sy = r->sy;
    if (ts_node_is_null(rhs) || ts_node_symbol(rhs) != sy->call) return 0;
    TSNode fn = ts_node_child_by_field_id(rhs, sy->f_function);
    if (ts_node_is_null(fn) || ts_node_symbol(fn) != sy->attribute) return 0;
    TSNode m = ts_node_child_by_field_id(fn, sy->f_attribute);
    int values = !ts_node_is_null(m) && idx_py_text_is(r, m, "values");
    int items = !ts_node_is_null(m) && idx_py_text_is(r, m, "items");
    TSNode v = lhs;
    if (items && ts_node_symbol(lhs) != sy->identifier && ts_node_named_child_count(lhs) == 2)
        v = ts_node_named_child(lhs, 1);
    else if (!values || ts_node_symbol(lhs) != sy->identifier)
        return 0;
    if (ts_node_symbol(v) != sy->identifier) return 0;
    if (!idx_py_values_of(r, t, ts_node_child_by_field_id(fn, sy->f_object), scope)) return 0;
    uint32_t a = ts_node_start_byte(v), b = ts_node_end_byte(v);
    if (b > r->len || a == b) return 0;
    idx_py_var_put(t, scope, 0, r->src + a, b - a, t->t.buf, 0);
    idx_py_var_tail(t, scope, r->src + a, b - a, NULL, py_node_line(lhs));
    return 1;
}

static void note_loop(ChunkRun *r, PyTypes *t, TSNode loop, int scope)
{
    const ChunkSyms *sy = r->sy;
    TSNode lhs = ts_node_child_by_field_id(loop, sy->f_left);
    TSNode rhs = ts_node_child_by_field_id(loop, sy->f_right);
    if (ts_node_is_null(lhs) || note_values_loop(r, t, lhs, rhs, scope)) return;
    /* `for i, x in enumerate(xs)`: x as in `for x in xs` */
    if (!ts_node_is_null(rhs) && ts_node_symbol(rhs) == sy->call &&
        ts_node_symbol(lhs) != sy->identifier && ts_node_named_child_count(lhs) == 2) {
        TSNode fn = ts_node_child_by_field_id(rhs, sy->f_function);
        TSNode args = ts_node_child_by_field_id(rhs, sy->f_arguments);
        if (!ts_node_is_null(fn) && idx_py_text_is(r, fn, "enumerate") && !ts_node_is_null(args) &&
            ts_node_named_child_count(args) >= 1) {
            lhs = ts_node_named_child(lhs, 1);
            rhs = ts_node_named_child(args, 0);
        }
    }
    if (ts_node_symbol(lhs) != sy->identifier) return;
    const char *type = NULL;
    const PyVar *items = NULL;
    StrBuf k;
    sb_init(&k);
    if (!ts_node_is_null(rhs) && ts_node_symbol(rhs) == sy->identifier) {
        idx_py_add_text(r, &k, rhs);
        sb_adds(&k, "[]");
        for (int s = scope; s >= 0 && !items; s = r->units[s].parent)
            if (r->units[s].kind != IDX_KIND_CLASS) items = idx_py_var_get(t, s, 0, k.buf, k.len);
        if (!items) items = idx_py_var_get(t, -1, 0, k.buf, k.len);
    } else if (!ts_node_is_null(rhs) && ts_node_symbol(rhs) == sy->attribute && scope >= 0 &&
               r->units[scope].kind == IDX_KIND_METHOD) {
        TSNode obj = ts_node_child_by_field_id(rhs, sy->f_object);
        TSNode at = ts_node_child_by_field_id(rhs, sy->f_attribute);
        uint32_t oa = ts_node_is_null(obj) ? 0 : ts_node_start_byte(obj);
        if (!ts_node_is_null(at) && !ts_node_is_null(obj) &&
            ts_node_symbol(obj) == sy->identifier && ts_node_end_byte(obj) - oa == 4 &&
            !memcmp(r->src + oa, "self", 4)) {
            idx_py_add_text(r, &k, at);
            sb_adds(&k, "[]");
            items = idx_py_var_get(t, r->units[scope].parent, 1, k.buf, k.len);
        }
    }
    sb_release(&k);
    int cls = scope >= 0 && r->units[scope].kind == IDX_KIND_METHOD ? r->units[scope].parent : -1;
    if (!items && cls >= 0 && !ts_node_is_null(rhs) && idx_py_text_is(r, rhs, "self")) {
        /* `for x in self`: an item of the class (its `__iter__`, its base's) */
        sb_reset(&t->t);
        sb_addf(&t->t, "%s()" IDX_REF_ITEMS, r->units[cls].symbol);
        type = t->t.buf;
    } else if (items && items->type) {
        sb_reset(&t->t);
        sb_adds(&t->t, items->type);
        type = t->t.buf;
    } else if (!ts_node_is_null(rhs) && ts_node_symbol(rhs) == sy->call) {
        TSNode fn = ts_node_child_by_field_id(rhs, sy->f_function);
        if (!ts_node_is_null(fn)) idx_py_squeezed(r, fn, &t->t);
        int self = t->t.len > 5 && !memcmp(t->t.buf, "self.", 5);
        if (!ts_node_is_null(fn) && idx_py_is_chain(t->t.buf ? t->t.buf : "", t->t.len) &&
            (!self || cls >= 0)) {
            if (self) { /* `self.iter_rules()`: the method as the class's own */
                char *m = xstrdup(t->t.buf + 5);
                sb_reset(&t->t);
                sb_addf(&t->t, "%s().%s", r->units[cls].symbol, m);
                free(m);
            }
            sb_adds(&t->t, "()" IDX_REF_ITEMS); /* an item of what the call gives */
            type = t->t.buf;
        }
    }
    uint32_t a = ts_node_start_byte(lhs), b = ts_node_end_byte(lhs);
    if (b > a && b <= r->len) {
        idx_py_var_put(t, scope, 0, r->src + a, b - a, type, 0);
        idx_py_var_tail(t, scope, r->src + a, b - a, NULL, py_node_line(loop));
    }
}

static void note_items(PyTypes *t, int scope, int attr, const char *name, size_t len,
                       const char *ann, size_t ann_len)
{
    StrBuf item, key;
    sb_init(&item);
    sb_init(&key);
    if (idx_py_annotation_item(ann, ann_len, &item)) {
        sb_add(&key, name, len);
        sb_adds(&key, "[]");
        idx_py_var_put(t, scope, attr, key.buf, key.len, item.buf, 1);
    }
    if (idx_py_annotation_value(ann, ann_len, &item)) { /* "name{}": a mapping's values */
        sb_reset(&key);
        sb_add(&key, name, len);
        sb_adds(&key, "{}");
        idx_py_var_put(t, scope, attr, key.buf, key.len, item.buf, 1);
    }
    sb_release(&item);
    sb_release(&key);
}

static void scan_params(ChunkRun *r, PyTypes *t, TSNode def, int scope);

/* Whether the walk below can skip the subtree of expression c: no
 * statement is written inside an expression (ChunkSyms.bare), and a
 * comprehension's `for` clause, the one thing the walk looks for there, is
 * not inside one whose text has no "for". */
static int bare_expression(ChunkRun *r, TSNode c, TSSymbol s)
{
    const ChunkSyms *sy = r->sy;
    size_t k = 0;
    while (k < sy->n_bare && sy->bare[k] != s)
        k++;
    if (k == sy->n_bare) return 0;
    uint32_t a = ts_node_start_byte(c), b = ts_node_end_byte(c);
    if (b > r->len || b < a) return 0;
    for (const char *p = r->src + a, *end = r->src + b; p + 3 <= end; p++) {
        p = memchr(p, 'f', (size_t)(end - p));
        if (!p || p + 3 > end) break;
        if (p[1] == 'o' && p[2] == 'r') return 0;
    }
    return 1;
}

/* Every assignment in the subtree of n (function bodies: nested ones too,
 * whose annotated parameters count as the function's variables). */
static void scan_assignments(ChunkRun *r, PyTypes *t, TSNode n, int scope, int cls)
{
    TSTreeCursor cur = ts_tree_cursor_new(n);
    size_t depth = 0;
    int descend = 1;
    /* the cursor's depth says where a node is (ts_node_parent walks down
     * from the root at each call); a string holds no statement, a call
     * may hold a comprehension (`f([p.m() for p in ps()])`) */
    while (idx_ts_walk_next(&cur, &depth, descend)) {
        TSNode c = ts_tree_cursor_current_node(&cur);
        TSSymbol s = ts_node_symbol(c);
        descend = s != r->sy->class_definition && s != r->sy->string && !bare_expression(r, c, s);
        if (s == r->sy->assignment) note_assignment(r, t, c, scope, cls, depth == 2);
        if (s == r->sy->for_statement || s == r->sy->for_in_clause) note_loop(r, t, c, scope);
        if (s == r->sy->if_statement) idx_py_note_guard(r, t, c, scope, depth == 1);
        if (s == r->sy->function_definition) scan_params(r, t, c, scope);
    }
    ts_tree_cursor_delete(&cur);
}

/* The statements directly in a body (module or class): their assignments. */
static void scan_body(ChunkRun *r, PyTypes *t, TSNode body, int scope, int attr)
{
    const ChunkSyms *sy = r->sy;
    /* a cursor over the children: ts_node_named_child counts from the
     * first child at each call */
    TSTreeCursor cur = ts_tree_cursor_new(body);
    for (int more = ts_tree_cursor_goto_first_child(&cur); more;
         more = ts_tree_cursor_goto_next_sibling(&cur)) {
        TSNode st = ts_tree_cursor_current_node(&cur);
        if (!ts_node_is_named(st) || ts_node_symbol(st) != sy->expression_statement) continue;
        TSNode asg = idx_py_first_named(r, st);
        if (ts_node_is_null(asg) || ts_node_symbol(asg) != sy->assignment) continue;
        TSNode lhs = ts_node_child_by_field_id(asg, sy->f_left);
        if (ts_node_is_null(lhs) || ts_node_symbol(lhs) != sy->identifier) continue;
        uint32_t a = ts_node_start_byte(lhs), b = ts_node_end_byte(lhs);
        int typed = assigned_type(r, t, asg, attr ? -1 : scope);
        TSNode rhs = ts_node_child_by_field_id(asg, sy->f_right);
        if (!typed && attr && !ts_node_is_null(rhs) &&
            (ts_node_symbol(rhs) == sy->identifier || ts_node_symbol(rhs) == sy->attribute)) {
            /* `response_class = Response` in a class body: the class itself */
            StrBuf raw;
            sb_init(&raw);
            idx_py_squeezed(r, rhs, &raw);
            if (idx_py_is_chain(raw.buf ? raw.buf : "", raw.len)) {
                sb_reset(&t->t);
                sb_addc(&t->t, '@');
                sb_add(&t->t, raw.buf, raw.len);
                typed = 1;
            }
            sb_release(&raw);
        }
        const char *type = typed > 0 ? t->t.buf : NULL;
        if (b > a && b <= r->len)
            idx_py_var_put(t, scope, attr, r->src + a, b - a, type, typed == 2 || typed == -1);
        TSNode ty = ts_node_child_by_field_id(asg, sy->f_type);
        if (b > a && b <= r->len && !ts_node_is_null(ty)) {
            StrBuf raw;
            sb_init(&raw);
            idx_py_squeezed(r, ty, &raw);
            note_items(t, scope, attr, r->src + a, b - a, raw.buf ? raw.buf : "", raw.len);
            sb_release(&raw);
        }
    }
    ts_tree_cursor_delete(&cur);
}

/* A function's annotated parameters. */
static void scan_params(ChunkRun *r, PyTypes *t, TSNode def, int scope)
{
    const ChunkSyms *sy = r->sy;
    TSNode ps = ts_node_child_by_field_id(def, sy->f_parameters);
    if (ts_node_is_null(ps)) return;
    uint32_t k = ts_node_named_child_count(ps);
    StrBuf raw;
    sb_init(&raw);
    for (uint32_t i = 0; i < k; i++) {
        TSNode p = ts_node_named_child(ps, i), name = {0};
        TSSymbol s = ts_node_symbol(p);
        if (s == sy->typed_default_parameter)
            name = ts_node_child_by_field_id(p, sy->f_name);
        else if (s == sy->typed_parameter)
            name = ts_node_named_child(p, 0);
        else
            continue;
        TSNode ty = ts_node_child_by_field_id(p, sy->f_type);
        if (ts_node_is_null(name) || ts_node_symbol(name) != sy->identifier || ts_node_is_null(ty))
            continue;
        idx_py_squeezed(r, ty, &raw);
        uint32_t a = ts_node_start_byte(name), b = ts_node_end_byte(name);
        int ok = idx_py_annotation_type(raw.buf ? raw.buf : "", raw.len, &t->t);
        if (b > a && b <= r->len) {
            idx_py_var_put(t, scope, 0, r->src + a, b - a, ok ? t->t.buf : NULL, 1);
            note_items(t, scope, 0, r->src + a, b - a, raw.buf ? raw.buf : "", raw.len);
        }
    }
    sb_release(&raw);
}

/* The innermost unit holding a line, or -1 (module code). */
static int unit_at(const ChunkRun *r, uint32_t line)
{
    /* units come in source order, a method after its class and inside it:
     * the innermost is the last one starting at or before line, else the
     * nearest of its classes that reaches it (a scan of every unit for each
     * reference cost units x references: 28,000 one-method classes, 1.6 s) */
    size_t lo = 0, hi = r->n_units;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->units[mid].start <= line)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (int i = (int)lo - 1; i >= 0; i = r->units[i].parent)
        if (line <= r->units[i].end) return i;
    return -1;
}

/* The class a proxy name stands for when the file imports it by that name
 * (`from flask import current_app`), from the row's receiver_proxies. */
static const char *proxy_type(const ChunkRun *r, const char *const *p, const char *name, size_t len)
{
    for (; p && p[0] && p[1]; p += 2) {
        if (strlen(p[0]) != len || memcmp(p[0], name, len) != 0) continue;
        for (size_t i = 0; i < r->n_refs; i++) {
            const ChunkRef *im = &r->refs[i];
            if (im->kind == REF_IMPORT && im->member && im->alias && !strcmp(im->member, p[0]) &&
                !strcmp(im->alias, p[0]))
                return p[1];
        }
    }
    return NULL;
}

/* A call on the result of a call the file cannot type ("?.f().m",
 * "super().f().m"): "?.m", the method resolved by its name as on any
 * untyped receiver. */
static void untyped_result(ChunkRef *ref)
{
    const char *last = NULL, *from = ref->name;
    if (!strncmp(from, IDX_REF_SUPER, IDX_REF_SUPER_LEN))
        from += IDX_REF_SUPER_LEN - 1; /* super() itself is no result */
    for (const char *p = strstr(from, "()."); p; p = strstr(p + 1, "()."))
        last = p;
    if (!last) return;
    char *m = xstrdup(last + 3);
    free(ref->name);
    ref->name = xmalloc(strlen(m) + 3);
    memcpy(ref->name, "?.", 2);
    memcpy(ref->name + 2, m, strlen(m) + 1);
    free(m);
}

static void retype_ref(ChunkRun *r, PyTypes *t, ChunkRef *ref, const char *const *proxies)
{
    const char *n = ref->name;
    size_t first = strcspn(n, ".(");
    if (n[0] == '?' || !strncmp(n, IDX_REF_SUPER, IDX_REF_SUPER_LEN) ||
        (first == 3 && !memcmp(n, "cls", 3))) {
        untyped_result(ref);
        return;
    }
    /* "f().m": the resolver reads what f returns (graph_types.c) */
    if (!n[first] || n[first] == '(') return;
    int u = unit_at(r, ref->line);
    const PyVar *v = NULL;
    const char *rest = n + first + 1, *type = NULL;
    int proxy = 0, own = 0;
    int cls = u >= 0 && r->units[u].kind == IDX_KIND_METHOD ? r->units[u].parent : -1;
    /* `self` annotated in a function that is no method (`def fget(self: "Response")`): a variable
     */
    const PyVar *self_var = first == 4 && !memcmp(n, "self", 4) && cls < 0 && u >= 0
                                ? idx_py_var_get(t, u, 0, n, first)
                                : NULL;
    if (first == 4 && !memcmp(n, "self", 4) && !(self_var && self_var->type)) {
        size_t an = strcspn(rest, ".(");
        if (cls < 0) untyped_result(ref);
        if (cls < 0 || !rest[an]) return;
        v = rest[an] == '.' ? idx_py_var_get(t, cls, 1, rest, an) : NULL;
        if (v) {
            rest += an + 1;
        } else {
            /* `self.h.get()` with h typed elsewhere (a base, another file), or
             * `self.copy().m`: the class's own name, its attribute or
             * method's result read by the resolver */
            type = r->units[cls].symbol;
            own = 1;
        }
    } else {
        for (int s = u; s >= 0 && !v; s = r->units[s].parent)
            if (r->units[s].kind != IDX_KIND_CLASS) v = idx_py_var_get(t, s, 0, n, first);
        if (!v) v = idx_py_var_get(t, -1, 0, n, first);
        if (!v && (type = proxy_type(r, proxies, n, first)) != NULL) proxy = 1;
    }
    if (v) type = v->type;
    /* below a straight-line assignment of a variable assigned other things too */
    if (v && !type && !v->attr && v->scope == u && v->tail && ref->line > v->tail_line)
        type = v->tail;
    for (int k = 0; v && !v->attr && v->scope == u && k < v->n_in; k++)
        if (v->in[k].type && ref->line >= v->in[k].from && ref->line <= v->in[k].to)
            type = v->in[k].type;
    if (!type) {
        if (v) untyped_result(ref);
        return;
    }
    StrBuf full;
    sb_init(&full);
    if (type[0] == '@') /* a class held in a variable: its attribute */
        sb_addf(&full, "%s.%s", type + 1, rest);
    else
        sb_addf(&full, "%s%s().%s", proxy ? "=" : "", type, rest);
    /* a type read off another typed receiver (`m = rx.match(s)` with
     * `rx = re.compile(...)`): that receiver's type in its place */
    for (int depth = 0; depth < 3 && !proxy && !own; depth++) {
        size_t root = strcspn(full.buf, ".(");
        if (full.buf[root] != '.') break;
        const PyVar *w = NULL;
        for (int s = u; s >= 0 && !w; s = r->units[s].parent)
            if (r->units[s].kind != IDX_KIND_CLASS) w = idx_py_var_get(t, s, 0, full.buf, root);
        if (!w) w = idx_py_var_get(t, -1, 0, full.buf, root);
        if (!w || !w->type || w == v) break;
        sb_reset(&t->t);
        if (w->type[0] == '@')
            sb_addf(&t->t, "%s%s", w->type + 1, full.buf + root);
        else
            sb_addf(&t->t, "%s()%s", w->type, full.buf + root);
        sb_reset(&full);
        sb_add(&full, t->t.buf, t->t.len);
        v = w;
    }
    sb_reset(&t->t);
    sb_add(&t->t, full.buf, full.len);
    sb_release(&full);
    free(ref->name);
    ref->name = xstrndup(t->t.buf, t->t.len);
}

/* A `self.name` read ("__class__().name") outside a method, of a data
 * attribute the class assigns, or where a class of this file defines name
 * as a method and none as a property (the method passed as a value, not
 * called): 1 to drop it. */
static int method_value(ChunkRun *r, const PyTypes *t, const ChunkRef *ref)
{
    const char *m = ref->name + 12;
    int method = 0;
    /* in a method, not a data attribute its class assigns (self.name = ...) */
    int u = unit_at(r, ref->line);
    if (u < 0 || r->units[u].kind != IDX_KIND_METHOD) return 1;
    /* declared in the class's body (`message: Optional[str] = None`): its
     * own attribute, not a base's property of that name */
    const PyVar *own = idx_py_var_get(t, r->units[u].parent, 1, m, strlen(m));
    for (size_t i = 0; i < r->n_units; i++) {
        const ChunkUnit *v = &r->units[i];
        if (v->kind != IDX_KIND_METHOD || strcmp(v->name, m) != 0) continue;
        if (idx_py_is_property(r, v) && (!own || !own->declared || v->parent == r->units[u].parent))
            return 0; /* assigned through its setter, maybe */
        method = 1;
    }
    return method || own != NULL;
}

/* A bare call of a variable its function assigns (`push = buf.append`,
 * `push(c)`): the name is the function's own, what it holds unknown, never
 * a definition found by the name alone: 1 to drop it. Kept: a name the
 * function imports too (`from .testing import FlaskClient as cls`), and a
 * class held in a variable named as the class (`ChangeList =
 * self.get_changelist(request)`), which is what the name finds. */
static int local_call(ChunkRun *r, const PyTypes *t, const ChunkRef *ref)
{
    const char *n = ref->name;
    size_t len = strcspn(n, ".(");
    if (n[len] || !len || n[0] == '?' || n[0] == '=' || n[0] == '!' || (n[0] >= 'A' && n[0] <= 'Z'))
        return 0;
    int u = unit_at(r, ref->line);
    if (u < 0 || r->units[u].kind == IDX_KIND_CLASS || !idx_py_var_get(t, u, 0, n, len)) return 0;
    for (size_t i = 0; i < r->n_refs; i++)
        if (r->refs[i].kind == REF_IMPORT && r->refs[i].alias && !strcmp(r->refs[i].alias, n) &&
            unit_at(r, r->refs[i].line) == u)
            return 0;
    return 1;
}

/* The item class of a class that derives from a container of it
 * (`class Traceback(List[TracebackEntry])`), into out; 0 for none. */
static int base_items(ChunkRun *r, const ChunkUnit *u, StrBuf *out)
{
    TSNode sup = ts_node_child_by_field_id(u->def, r->sy->f_superclasses);
    uint32_t k = ts_node_is_null(sup) ? 0 : ts_node_named_child_count(sup);
    StrBuf raw;
    sb_init(&raw);
    int found = 0;
    for (uint32_t i = 0; i < k && !found; i++) {
        TSNode b = ts_node_named_child(sup, i);
        if (ts_node_symbol(b) != r->sy->subscript) continue;
        idx_py_squeezed(r, b, &raw);
        sb_reset(out);
        found = raw.len && idx_py_annotation_item(raw.buf, raw.len, out);
    }
    sb_release(&raw);
    return found;
}

/* The type facts other files' receivers read (IDX_REF_TYPE_FACT): each
 * class's typed attributes on the class, each function's result on it,
 * and which methods are properties. */
static void push_facts(ChunkRun *r, PyTypes *t)
{
    StrBuf f;
    sb_init(&f);
    for (size_t i = 0; i < t->n; i++) {
        const PyVar *v = &t->v[i];
        size_t len = strlen(v->name);
        if (!v->attr || v->scope < 0 || !v->type || v->type[0] == '@' ||
            (len > 2 && v->name[len - 1] == ']'))
            continue;
        sb_reset(&f);
        sb_addf(&f, "%s%s:%s", IDX_REF_TYPE_FACT, v->name, v->type);
        ChunkRef *ref = idx_py_ref_push(r, REF_TYPE, v->scope, r->units[v->scope].def);
        ref->name = xstrndup(f.buf, f.len);
    }
    for (size_t i = 0; i < r->n_units; i++) {
        /* `class Traceback(List[TracebackEntry])`: its items */
        if (r->units[i].kind == IDX_KIND_CLASS && base_items(r, &r->units[i], &t->t)) {
            sb_reset(&f);
            sb_addf(&f, "%s%s:%s", IDX_REF_TYPE_FACT, IDX_REF_ITEMS, t->t.buf);
            idx_py_ref_push(r, REF_TYPE, (int)i, r->units[i].def)->name = xstrndup(f.buf, f.len);
        }
        if (r->units[i].kind == IDX_KIND_METHOD && idx_py_is_property(r, &r->units[i]))
            idx_py_ref_push(r, REF_TYPE, (int)i, r->units[i].def)->name =
                xstrdup(IDX_REF_TYPE_FACT "@:");
        /* `-> Iterator[X]`: its items; `__iter__`'s are its class's */
        if (idx_py_return_items(r, &r->units[i], &t->t)) {
            sb_reset(&f);
            sb_addf(&f, "%s%s:%s", IDX_REF_TYPE_FACT, IDX_REF_ITEMS, t->t.buf);
            idx_py_ref_push(r, REF_TYPE, (int)i, r->units[i].def)->name = xstrndup(f.buf, f.len);
            int cls = r->units[i].kind == IDX_KIND_METHOD ? r->units[i].parent : -1;
            if (cls >= 0 && !strcmp(r->units[i].name, "__iter__"))
                idx_py_ref_push(r, REF_TYPE, cls, r->units[cls].def)->name = xstrndup(f.buf, f.len);
        }
        if (!idx_py_return_type(r, &r->units[i], &t->t)) continue;
        sb_reset(&f);
        sb_addf(&f, "%s():%s", IDX_REF_TYPE_FACT, t->t.buf);
        idx_py_ref_push(r, REF_TYPE, (int)i, r->units[i].def)->name = xstrndup(f.buf, f.len);
    }
    sb_release(&f);
}

void idx_py_type_refs(ChunkRun *r, TSNode *roots, size_t n_roots, const char *const *proxies)
{
    PyTypes t = {0};
    sb_init(&t.t);
    for (size_t i = 0; i < n_roots; i++)
        scan_body(r, &t, roots[i], -1, 0);
    for (size_t i = 0; i < r->n_units; i++) {
        ChunkUnit *u = &r->units[i];
        TSNode body = ts_node_child_by_field_id(u->def, r->sy->f_body);
        if (u->kind == IDX_KIND_CLASS) {
            if (!ts_node_is_null(body)) scan_body(r, &t, body, (int)i, 1);
            continue;
        }
        scan_params(r, &t, u->def, (int)i);
        int cls = u->kind == IDX_KIND_METHOD ? u->parent : -1;
        if (!ts_node_is_null(body)) scan_assignments(r, &t, body, (int)i, cls);
    }
    size_t k = 0, pre = strlen(IDX_PY_READ);
    for (size_t i = 0; i < r->n_refs; i++) {
        ChunkRef *ref = &r->refs[i];
        if (ref->kind == REF_CALL && ref->name &&
            !strncmp(ref->name, IDX_REF_CLASS, IDX_REF_CLASS_LEN) && method_value(r, &t, ref)) {
            free(ref->name);
            continue;
        }
        if (ref->kind == REF_CALL && ref->name && !strncmp(ref->name, IDX_PY_READ, pre)) {
            /* an attribute read: kept with its receiver typed, else no call */
            memmove(ref->name, ref->name + pre, strlen(ref->name + pre) + 1);
            retype_ref(r, &t, ref, proxies);
            if (!strstr(ref->name, "().") || ref->name[0] == '?') {
                free(ref->name);
                continue;
            }
            char *read = xmalloc(pre + strlen(ref->name) + 1);
            memcpy(read, IDX_PY_READ, pre);
            memcpy(read + pre, ref->name, strlen(ref->name) + 1);
            free(ref->name);
            ref->name = read;
        } else if (ref->kind == REF_CALL && ref->name && local_call(r, &t, ref)) {
            free(ref->name);
            continue;
        } else if (ref->kind == REF_CALL && ref->name) {
            retype_ref(r, &t, ref, proxies);
        }
        r->refs[k++] = *ref;
    }
    r->n_refs = k;
    push_facts(r, &t);
    idx_py_vars_release(&t);
}
