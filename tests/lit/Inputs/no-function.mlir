// A module without a function: nothing to compile (IREE said "outer module does not contain a vm.module op").
module {
}
