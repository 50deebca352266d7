package manifest_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// obj is a JSON object under construction.
type obj = map[string]any

// doc builds a one-milestone manifest of the given board SKUs.
func doc(t *testing.T, product string, skus ...obj) []byte {
	t.Helper()
	list := make([]any, len(skus))
	for i, s := range skus {
		list[i] = s
	}
	b, err := json.Marshal(obj{"ProductName": product, "Milestones": []any{
		obj{"Name": "1.0", "State": "Released", "BoardSKUs": list},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sku builds a board SKU of the given Type with firmware entries.
func sku(typ string, firmware ...obj) obj {
	fw := make([]any, len(firmware))
	for i, f := range firmware {
		fw[i] = f
	}
	return obj{"Name": typ + " SKU", "Type": typ, "Components": obj{"Firmware": fw, "Software": []any{}}}
}

// entry builds a firmware entry with its locations.
func entry(component string, locs ...obj) obj {
	l := make([]any, len(locs))
	for i, x := range locs {
		l[i] = x
	}
	return obj{"Component": component, "Version": "1.0", "Type": "Prod", "Locations": l}
}

// payload is a Firmware location at url whose Sha256 is that of the URL.
func payload(url string) obj {
	return obj{"Location": url, "LocationType": "HTTPS", "Type": "Firmware", "Sha256": shaOf(url)}
}

func shaOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
