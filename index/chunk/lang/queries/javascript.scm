; JavaScript: functions, classes and methods, functions bound to names
; (const f = () => ..., obj.f = function ...), calls, new, extends,
; import and require(), and what `module.exports = …` makes the module's value.
(function_declaration name: (identifier) @name body: (_) @body) @def.function
(generator_function_declaration name: (identifier) @name body: (_) @body) @def.function
(class_declaration name: (identifier) @name body: (_) @body) @def.class
(method_definition name: (_) @name body: (_) @body) @def.method
(lexical_declaration (variable_declarator name: (identifier) @name
  value: [(arrow_function body: (_) @body) (function_expression body: (_) @body)])) @def.function
(variable_declaration (variable_declarator name: (identifier) @name
  value: [(arrow_function body: (_) @body) (function_expression body: (_) @body)])) @def.function
(assignment_expression left: (member_expression) @name
  right: [(arrow_function body: (_) @body) (function_expression !name body: (_) @body)]) @def.function
(assignment_expression left: (member_expression object: (_) @_object) @name
  right: (function_expression name: (_) body: (_) @body) (#not-eq? @_object "module")) @def.function
; `module.exports = function f (…) {…}`: the module's function, named f
(assignment_expression left: (member_expression object: (identifier) @_object
  property: (property_identifier) @_property)
  right: (function_expression name: (identifier) @name body: (_) @body)
  (#eq? @_object "module") (#eq? @_property "exports")) @def.function
; a function assigned through a wrapper it is the first argument of
; (obj.f = deprecate(function f () {…}, 'message'))
(assignment_expression left: (member_expression) @name
  right: (call_expression arguments: (arguments . (function_expression body: (_) @body)))) @def.function

(call_expression function: (_) @ref.call)
(new_expression constructor: (_) @ref.call)
(class_heritage (_) @ref.inherit)
(import_statement) @import
(variable_declarator value: (call_expression)) @import
(variable_declarator value: (member_expression object: (call_expression))) @import
(assignment_expression left: (member_expression property: (property_identifier))
  right: [(identifier) (function_expression) (arrow_function) (class)]) @import
