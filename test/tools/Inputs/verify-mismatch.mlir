// Not a test: input of verify-diagnostics.mlir, whose expectations all fail. Line numbers matter.

// -----

func.func @wrong_message(%a: index, %b: index) -> i1 {
  // expected-error @+1 {{unknown predicate 'sge'}}
  %0 = "sym.cmp"(%a, %b) {predicate = "slt"} : (index, index) -> i1
  return %0 : i1
}

// -----

func.func @never_emitted() {
  // expected-error @+1 {{never emitted}}
  return
}

// -----

func.func @unexpected(%a: index, %b: index) -> i1 {
  %0 = "sym.cmp"(%a, %b) {predicate = "slt"} : (index, index) -> i1
  return %0 : i1
}

// -----

func.func @wrong_kind(%a: index, %b: index) -> i1 {
  // expected-warning @+1 {{unknown predicate}}
  %0 = "sym.cmp"(%a, %b) {predicate = "slt"} : (index, index) -> i1
  return %0 : i1
}

// -----

func.func @wrong_line(%a: index, %b: index) -> i1 {
  // expected-error @+2 {{unknown predicate}}
  %0 = "sym.cmp"(%a, %b) {predicate = "slt"} : (index, index) -> i1
  return %0 : i1
}
