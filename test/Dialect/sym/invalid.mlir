// Verifier errors of the sym dialect, one per chunk.
// RUN: symopt %s --split-input-file --verify-diagnostics

// expected-error @+1 {{'sym.symbol' op symbol 's0' has an empty range: lo = 5 > hi = 4}}
"sym.symbol"() {sym_name = "s0", lo = 5 : i64, hi = 4 : i64} : () -> ()

// -----

// expected-error @+1 {{'sym.symbol' op symbol 's0' is declared more than once}}
"sym.symbol"() {sym_name = "s0", lo = 2 : i64} : () -> ()
"sym.symbol"() {sym_name = "s0", lo = 0 : i64} : () -> ()

// -----

// expected-error @+1 {{'sym.symbol' op symbol name '0s' must start with a letter}}
"sym.symbol"() {sym_name = "0s", lo = 2 : i64} : () -> ()

// -----

// expected-error @+1 {{'sym.symbol' op attribute 'hi' must be an integer}}
"sym.symbol"() {sym_name = "s0", lo = 2 : i64, hi = "inf"} : () -> ()

// -----

// expected-error @+1 {{'sym.symbol' op symbol 's0' hint 1 lies outside its range}}
"sym.symbol"() {sym_name = "s0", lo = 2 : i64, hint = 1 : i64} : () -> ()

// -----

// expected-error @+1 {{'sym.symbol' op symbol 's0' hint 65 lies outside its range}}
"sym.symbol"() {sym_name = "s0", lo = 2 : i64, hi = 64 : i64, hint = 65 : i64} : () -> ()

// -----

func.func @nested() {
  // expected-error @+1 {{'sym.symbol' op must be declared at the top level of a module}}
  "sym.symbol"() {sym_name = "s0", lo = 2 : i64} : () -> ()
  return
}

// -----

"sym.symbol"() {sym_name = "s0", lo = 2 : i64} : () -> ()
func.func @unknown_symbol() -> index {
  // expected-error @+1 {{'sym.value' op refers to unknown symbol 's1'}}
  %0 = "sym.value"() {symbol = "s1"} : () -> index
  return %0 : index
}

// -----

func.func @bad_predicate(%a: index, %b: index) -> i1 {
  // expected-error @+1 {{'sym.cmp' op unknown predicate 'slt' (expected one of eq, ne, lt, le, gt, ge)}}
  %0 = "sym.cmp"(%a, %b) {predicate = "slt"} : (index, index) -> i1
  return %0 : i1
}

// -----

func.func @cmp_wide_result(%a: index, %b: index) -> i8 {
  // expected-error @+1 {{'sym.cmp' op expects an i1 result, got i8}}
  %0 = "sym.cmp"(%a, %b) {predicate = "lt"} : (index, index) -> i8
  return %0 : i8
}

// -----

func.func @bind_dim_out_of_range(%x: !torch.vtensor<[?,4],f32>, %n: index) {
  // expected-error @+1 {{'sym.bind' op dim 2 is out of range for a rank-2 tensor}}
  "sym.bind"(%x, %n) {dim = 2 : i64} : (!torch.vtensor<[?,4],f32>, index) -> ()
  return
}

// -----

func.func @bind_negative_dim(%x: tensor<?xf32>, %n: index) {
  // expected-error @+1 {{'sym.bind' op dim -1 is out of range for a rank-1 tensor}}
  "sym.bind"(%x, %n) {dim = -1 : i64} : (tensor<?xf32>, index) -> ()
  return
}

// -----

func.func @bind_dim_on_non_tensor(%i: index, %n: index) {
  // expected-error @+1 {{'sym.bind' op 'dim' given but the bound value has type index, not a ranked tensor}}
  "sym.bind"(%i, %n) {dim = 0 : i64} : (index, index) -> ()
  return
}

// -----

func.func @bind_tensor_without_dim(%x: tensor<?xf32>, %n: index) {
  // expected-error @+1 {{'sym.bind' op binds a non-integer value of type tensor<?xf32>; add 'dim' to bind a tensor dimension}}
  "sym.bind"(%x, %n) : (tensor<?xf32>, index) -> ()
  return
}

// -----

func.func @guard_i32(%c: i32) {
  // expected-error @+1 {{'sym.guard' op expects i1 operands, got i32}}
  "sym.guard"(%c) {origin = "x"} : (i32) -> ()
  return
}

// -----

// The IRDL constraint (an integer) rejects an index condition before the i1 check runs.
func.func @guard_index(%c: index) {
  // expected-error @+1 {{expected base type 'builtin.integer' but got 'builtin.index'}}
  "sym.guard"(%c) {origin = "x"} : (index) -> ()
  return
}

// -----

func.func @guard_without_origin(%c: i1) {
  // expected-error @+1 {{'sym.guard' op attribute "origin" is expected but not provided}}
  "sym.guard"(%c) : (i1) -> ()
  return
}

// -----

func.func @assert_i8(%c: i8) {
  // expected-error @+1 {{'sym.assert' op expects i1 operands, got i8}}
  "sym.assert"(%c) {msg = "m"} : (i8) -> ()
  return
}

// -----

func.func @and_i32(%p: i32) -> i1 {
  // expected-error @+1 {{'sym.and' op expects i1 operands, got i32}}
  %0 = "sym.and"(%p, %p) : (i32, i32) -> i1
  return %0 : i1
}

// -----

func.func @not_wide_result(%p: i1) -> i32 {
  // expected-error @+1 {{'sym.not' op expects an i1 result, got i32}}
  %0 = "sym.not"(%p) : (i1) -> i32
  return %0 : i32
}

// -----

func.func @add_i64(%a: index) -> i64 {
  // expected-error @+1 {{expected base type 'builtin.index' but got 'builtin.integer'}}
  %0 = "sym.add"(%a, %a) : (index, index) -> i64
  return %0 : i64
}

// -----

func.func @constant_string() -> index {
  // expected-error @+1 {{expected base attribute 'builtin.integer' but got 'builtin.string'}}
  %0 = "sym.constant"() {value = "4"} : () -> index
  return %0 : index
}
