package crypto

import "fmt"

func fmtAll(k *Key) string {
	return fmt.Sprintf("%v %+v %#v %s %x %q", k, k, k, k, k, k) + fmt.Sprint(struct{ K *Key }{k})
}
