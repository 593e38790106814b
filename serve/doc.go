// Package serve will hold arca serve's request loop and wire types. It is
// empty until the serve protocol lands.
package serve
