package walletsig

import "errors"

// z-base-32, the human-oriented base-32 of Lightning node signmessage: bits
// are taken most significant first, five at a time, and the last group is
// zero-padded; there is no padding character.
const zbase32Alphabet = "ybndrfg8ejkmcpqxot1uwisza345h769"

var zbase32Index = func() [256]int {
	var idx [256]int
	for i := range idx {
		idx[i] = -1
	}
	for i := 0; i < len(zbase32Alphabet); i++ {
		idx[zbase32Alphabet[i]] = i
	}
	return idx
}()

// ZBase32Encode encodes b.
func ZBase32Encode(b []byte) string {
	words, _ := convertBits(b, 8, 5, true)
	out := make([]byte, len(words))
	for i, w := range words {
		out[i] = zbase32Alphabet[w]
	}
	return string(out)
}

// ZBase32Decode decodes s into whole bytes; leftover bits (fewer than eight)
// must be zero.
func ZBase32Decode(s string) ([]byte, error) {
	words := make([]byte, len(s))
	for i := 0; i < len(s); i++ {
		d := zbase32Index[s[i]]
		if d < 0 {
			return nil, errors.New("walletsig: not z-base-32")
		}
		words[i] = byte(d)
	}
	var acc uint32
	var bits uint
	out := make([]byte, 0, len(s)*5/8)
	for _, w := range words {
		acc = acc<<5 | uint32(w)
		bits += 5
		if bits >= 8 {
			bits -= 8
			out = append(out, byte(acc>>bits))
		}
	}
	if acc&(1<<bits-1) != 0 {
		return nil, errors.New("walletsig: z-base-32 has non-zero trailing bits")
	}
	return out, nil
}
