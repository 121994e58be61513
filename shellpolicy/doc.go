// Package shellpolicy decides whether a shell command line is allowed in a
// workflow state, by parsing it with a real shell parser
// (mvdan.cc/sh/v3/syntax) and classifying every simple command in it.
package shellpolicy
