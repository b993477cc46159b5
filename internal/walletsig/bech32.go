package walletsig

import (
	"errors"
	"strings"
)

// Bech32 (BIP-173) and Bech32m (BIP-350) decoding, without BIP-173's
// 90-character limit: Lightning invoices are longer (BOLT 11) and Spark
// addresses use the same encoding.

const bech32Charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"

// Bech32 checksum variants.
const (
	Bech32  = 1
	Bech32m = 0x2bc830a3
)

// maxBech32Len bounds what decodeBech32 accepts (a BOLT 11 invoice with a long
// description stays well below it).
const maxBech32Len = 7089

var bech32Index = func() [256]int {
	var idx [256]int
	for i := range idx {
		idx[i] = -1
	}
	for i := 0; i < len(bech32Charset); i++ {
		idx[bech32Charset[i]] = i
	}
	return idx
}()

func bech32Polymod(values []byte) uint32 {
	gen := [5]uint32{0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3}
	chk := uint32(1)
	for _, v := range values {
		top := chk >> 25
		chk = (chk&0x1ffffff)<<5 ^ uint32(v)
		for i := range 5 {
			if (top>>i)&1 == 1 {
				chk ^= gen[i]
			}
		}
	}
	return chk
}

func bech32HRPExpand(hrp string) []byte {
	out := make([]byte, 0, 2*len(hrp)+1)
	for i := 0; i < len(hrp); i++ {
		out = append(out, hrp[i]>>5)
	}
	out = append(out, 0)
	for i := 0; i < len(hrp); i++ {
		out = append(out, hrp[i]&31)
	}
	return out
}

// DecodeBech32 splits s into its human-readable part and its 5-bit data
// words (checksum removed) and reports which checksum variant verified.
func DecodeBech32(s string) (hrp string, data []byte, variant uint32, err error) {
	if len(s) < 8 || len(s) > maxBech32Len {
		return "", nil, 0, errors.New("walletsig: bech32 length out of range")
	}
	if strings.ToLower(s) != s && strings.ToUpper(s) != s {
		return "", nil, 0, errors.New("walletsig: bech32 mixes upper and lower case")
	}
	s = strings.ToLower(s)
	sep := strings.LastIndexByte(s, '1')
	if sep < 1 || sep+7 > len(s) {
		return "", nil, 0, errors.New("walletsig: bech32 separator misplaced")
	}
	hrp = s[:sep]
	for i := 0; i < len(hrp); i++ {
		if hrp[i] < 33 || hrp[i] > 126 {
			return "", nil, 0, errors.New("walletsig: bech32 human-readable part has an invalid character")
		}
	}
	words := make([]byte, 0, len(s)-sep-1)
	for i := sep + 1; i < len(s); i++ {
		d := bech32Index[s[i]]
		if d < 0 {
			return "", nil, 0, errors.New("walletsig: bech32 data has an invalid character")
		}
		words = append(words, byte(d))
	}
	switch bech32Polymod(append(bech32HRPExpand(hrp), words...)) {
	case Bech32:
		variant = Bech32
	case Bech32m:
		variant = Bech32m
	default:
		return "", nil, 0, errors.New("walletsig: bech32 checksum mismatch")
	}
	return hrp, words[:len(words)-6], variant, nil
}

// convertBits regroups a sequence of from-bit values into to-bit values. With
// pad, a last incomplete group is zero-padded; without, leftover bits must be
// fewer than from and zero.
func convertBits(data []byte, from, to uint, pad bool) ([]byte, error) {
	var acc uint32
	var bits uint
	maxv := uint32(1)<<to - 1
	out := make([]byte, 0, len(data)*int(from)/int(to)+1)
	for _, v := range data {
		if uint32(v)>>from != 0 {
			return nil, errors.New("walletsig: value out of range")
		}
		acc = acc<<from | uint32(v)
		bits += from
		for bits >= to {
			bits -= to
			out = append(out, byte(acc>>bits&maxv))
		}
	}
	if pad {
		if bits > 0 {
			out = append(out, byte(acc<<(to-bits)&maxv))
		}
	} else if bits >= from || acc<<(to-bits)&maxv != 0 {
		return nil, errors.New("walletsig: invalid padding")
	}
	return out, nil
}
