; TypeScript: the JavaScript patterns plus interfaces, type aliases,
; enums, abstract classes, implements/extends and type references.
(function_declaration name: (identifier) @name body: (_) @body) @def.function
(generator_function_declaration name: (identifier) @name body: (_) @body) @def.function
(class_declaration name: (_) @name body: (_) @body) @def.class
(abstract_class_declaration name: (_) @name body: (_) @body) @def.class
(interface_declaration name: (_) @name body: (_) @body) @def.class
(type_alias_declaration name: (_) @name) @def.type
(enum_declaration name: (_) @name body: (_) @body) @def.type
(method_definition name: (_) @name body: (_) @body) @def.method
; a field holding a function (`add = (x) => { this.save(x) }`): a method, whose
; `this` is its class's
(public_field_definition name: (property_identifier) @name
  value: [(arrow_function body: (_) @body) (function_expression body: (_) @body)]) @def.method
; overload signatures: one unit with the implementation after them (its doc
; comment sits above the first signature)
(function_signature name: (identifier) @name) @def.function
(class_body (method_signature name: (_) @name) @def.method)
; an abstract method: the unit a base's calls of it reach (its overrides' callers)
(class_body (abstract_method_signature name: (_) @name) @def.method)
(lexical_declaration (variable_declarator name: (identifier) @name
  value: [(arrow_function body: (_) @body) (function_expression body: (_) @body)])) @def.function
(variable_declaration (variable_declarator name: (identifier) @name
  value: [(arrow_function body: (_) @body) (function_expression body: (_) @body)])) @def.function
; a module's binding made by a call that wraps a function (RxJS's error classes:
; `const EmptyError = createErrorClass((_super) => function EmptyErrorImpl() {…})`);
; not inside functions (a test's `const unsub = x.subscribe(() => …)`)
([(program (lexical_declaration (variable_declarator name: (identifier) @name
    value: [(call_expression arguments: (arguments [(arrow_function) (function_expression)]))
            (new_expression arguments: (arguments [(arrow_function) (function_expression)]))])) @def.function)
  (export_statement (lexical_declaration (variable_declarator name: (identifier) @name
    value: [(call_expression arguments: (arguments [(arrow_function) (function_expression)]))
            (new_expression arguments: (arguments [(arrow_function) (function_expression)]))])) @def.function)])
(assignment_expression left: (member_expression) @name
  right: [(arrow_function body: (_) @body) (function_expression body: (_) @body)]) @def.function

(call_expression function: (_) @ref.call)
(new_expression constructor: (_) @ref.call)
(extends_clause value: (_) @ref.inherit)
(implements_clause (_) @ref.inherit)
(extends_type_clause (_) @ref.inherit)
(type_identifier) @ref.type
(import_statement) @import
(variable_declarator value: (call_expression)) @import
; re-exports: `export * from './x'`, `export { a as b } from './x'`
(export_statement source: (string)) @import

; receivers of a known type (chunk_ts_types.c): parameters, variables
; (annotated, `new T()`, `f()`: what f gives), fields (annotated, `= new
; T()`, constructor parameter properties), results
([(required_parameter pattern: (identifier) @var.name
    type: (type_annotation [(type_identifier) (nested_type_identifier)
                            (generic_type name: [(type_identifier) (nested_type_identifier)])] @var.type))
  (optional_parameter pattern: (identifier) @var.name
    type: (type_annotation [(type_identifier) (nested_type_identifier)
                            (generic_type name: [(type_identifier) (nested_type_identifier)])] @var.type))])
(variable_declarator name: (identifier) @var.name
  type: (type_annotation [(type_identifier) (nested_type_identifier)
                          (generic_type name: [(type_identifier) (nested_type_identifier)])] @var.type))
(variable_declarator name: (identifier) @var.name
  value: [(new_expression constructor: [(identifier) (member_expression)] @var.type)
          (call_expression function: [(identifier) (member_expression)] @var.type)
          (await_expression (call_expression function: [(identifier) (member_expression)] @var.type))])
; a variable holding a field (`const q = this.queryCache`): the field's type
(variable_declarator name: (identifier) @var.name
  value: (member_expression object: (this)) @var.type)
(public_field_definition name: (property_identifier) @field.name
  type: (type_annotation [(type_identifier) (nested_type_identifier)
                          (generic_type name: [(type_identifier) (nested_type_identifier)])] @field.type))
(public_field_definition name: (property_identifier) @field.name
  value: (new_expression constructor: [(identifier) (member_expression)] @field.type))
(required_parameter (accessibility_modifier) pattern: (identifier) @field.name
  type: (type_annotation [(type_identifier) (nested_type_identifier)
                          (generic_type name: [(type_identifier) (nested_type_identifier)])] @field.type))
([(function_declaration return_type: (type_annotation [(type_identifier) (nested_type_identifier)
                          (generic_type name: [(type_identifier) (nested_type_identifier)])] @result.type))
  (method_definition return_type: (type_annotation [(type_identifier) (nested_type_identifier)
                          (generic_type name: [(type_identifier) (nested_type_identifier)])] @result.type))])
;
; a type or nothing (`let inner: Subscriber<T> | null = null`, `x?: T | undefined`):
; the type
(required_parameter pattern: (identifier) @var.name
  type: (type_annotation [(union_type [(type_identifier) (nested_type_identifier) (generic_type name: [(type_identifier) (nested_type_identifier)])] @var.type (literal_type))
                          (union_type (literal_type) [(type_identifier) (nested_type_identifier) (generic_type name: [(type_identifier) (nested_type_identifier)])] @var.type)]))
(optional_parameter pattern: (identifier) @var.name
  type: (type_annotation [(union_type [(type_identifier) (nested_type_identifier) (generic_type name: [(type_identifier) (nested_type_identifier)])] @var.type (literal_type))
                          (union_type (literal_type) [(type_identifier) (nested_type_identifier) (generic_type name: [(type_identifier) (nested_type_identifier)])] @var.type)]))
(variable_declarator name: (identifier) @var.name
  type: (type_annotation [(union_type [(type_identifier) (nested_type_identifier) (generic_type name: [(type_identifier) (nested_type_identifier)])] @var.type (literal_type))
                          (union_type (literal_type) [(type_identifier) (nested_type_identifier) (generic_type name: [(type_identifier) (nested_type_identifier)])] @var.type)]))
(public_field_definition name: (property_identifier) @field.name
  type: (type_annotation [(union_type [(type_identifier) (nested_type_identifier) (generic_type name: [(type_identifier) (nested_type_identifier)])] @field.type (literal_type))
                          (union_type (literal_type) [(type_identifier) (nested_type_identifier) (generic_type name: [(type_identifier) (nested_type_identifier)])] @field.type)]))
;
; an array (`observers: QueryObserver[]`): its element's type, for the callbacks
; of the row's element_methods (`this.observers.forEach((o) => o.destroy())`)
([(required_parameter pattern: (identifier) @var.name
    type: (type_annotation (array_type [(type_identifier) (nested_type_identifier) (generic_type name: [(type_identifier) (nested_type_identifier)])] @var.elem)))
  (optional_parameter pattern: (identifier) @var.name
    type: (type_annotation (array_type [(type_identifier) (nested_type_identifier) (generic_type name: [(type_identifier) (nested_type_identifier)])] @var.elem)))])
(variable_declarator name: (identifier) @var.name
  type: (type_annotation (array_type [(type_identifier) (nested_type_identifier) (generic_type name: [(type_identifier) (nested_type_identifier)])] @var.elem)))
(public_field_definition name: (property_identifier) @field.name
  type: (type_annotation (array_type [(type_identifier) (nested_type_identifier) (generic_type name: [(type_identifier) (nested_type_identifier)])] @field.elem)))
;
; callbacks' parameters (chunk_ts_types.c): a function-typed parameter's own
; parameter types (`init: (source: Observable<T>, subscriber: Subscriber<R>)
; => void`), facts of the function; an untyped parameter of a function passed
; to a call (`operate((source, subscriber) => …)`, `new Observable((s) => …)`)
; takes the type the callee declares for it
([(required_parameter type: (type_annotation (function_type parameters: (formal_parameters
    [(required_parameter pattern: (identifier)
       type: (type_annotation [(type_identifier) (nested_type_identifier)
                               (generic_type name: [(type_identifier) (nested_type_identifier)])] @arg.type))
     (optional_parameter pattern: (identifier)
       type: (type_annotation [(type_identifier) (nested_type_identifier)
                               (generic_type name: [(type_identifier) (nested_type_identifier)])] @arg.type))] @arg.param))))
  (optional_parameter type: (type_annotation (function_type parameters: (formal_parameters
    [(required_parameter pattern: (identifier)
       type: (type_annotation [(type_identifier) (nested_type_identifier)
                               (generic_type name: [(type_identifier) (nested_type_identifier)])] @arg.type))
     (optional_parameter pattern: (identifier)
       type: (type_annotation [(type_identifier) (nested_type_identifier)
                               (generic_type name: [(type_identifier) (nested_type_identifier)])] @arg.type))] @arg.param))))] @arg.fn)
(call_expression function: [(identifier) (member_expression)] @arg.callee
  arguments: (arguments [(arrow_function parameters: (formal_parameters
                          [(required_parameter pattern: (identifier) @arg.name)
                           (optional_parameter pattern: (identifier) @arg.name)] @arg.param))
                       (function_expression parameters: (formal_parameters
                          [(required_parameter pattern: (identifier) @arg.name)
                           (optional_parameter pattern: (identifier) @arg.name)] @arg.param))] @arg.fn))
(call_expression function: [(identifier) (member_expression)] @arg.callee
  arguments: (arguments (arrow_function parameter: (identifier) @arg.name @arg.param) @arg.fn))
(new_expression constructor: [(identifier) (member_expression)] @arg.callee
  arguments: (arguments [(arrow_function parameters: (formal_parameters
                          [(required_parameter pattern: (identifier) @arg.name)
                           (optional_parameter pattern: (identifier) @arg.name)] @arg.param))
                       (function_expression parameters: (formal_parameters
                          [(required_parameter pattern: (identifier) @arg.name)
                           (optional_parameter pattern: (identifier) @arg.name)] @arg.param))] @arg.fn))
(new_expression constructor: [(identifier) (member_expression)] @arg.callee
  arguments: (arguments (arrow_function parameter: (identifier) @arg.name @arg.param) @arg.fn))
