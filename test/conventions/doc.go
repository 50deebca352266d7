// Package conventions holds tests that read the module's source for
// conventions a user sees in rmsd's output but no single package's tests can
// check, such as the unit in every log duration field's name. It has no
// non-test code and nothing imports it.
package conventions
