// Package pdp will run the policy decision point arca serve consults. It is
// empty until the PDP lands.
package pdp
