/* half.c - fp32 <-> fp16 / bf16 conversions for the sync runtime (round to
 * nearest even, as CUDA's __float2half_rn and torch's casts). */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "syncrt.h"

static uint32_t bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof(u));
	return u;
}

static float from_bits(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof(f));
	return f;
}

uint16_t autosync_rt_f32_to_f16(float f)
{
	uint32_t x = bits(f), sign = (x >> 16) & 0x8000, mant = x & 0x7fffff;
	int exp = (int)((x >> 23) & 0xff);

	if (exp == 0xff) /* inf, nan */
		return (uint16_t)(sign | 0x7c00 |
				  (mant ? 0x200 | (mant >> 13) : 0));
	exp = exp - 127 + 15;
	if (exp >= 0x1f) /* overflow */
		return (uint16_t)(sign | 0x7c00);
	if (exp <= 0) { /* subnormal or zero */
		uint32_t m, shift, r, half;
		if (exp < -10)
			return (uint16_t)sign;
		m = mant | 0x800000;
		shift = (uint32_t)(14 - exp);
		r = m >> shift;
		half = 1u << (shift - 1);
		if ((m & ((1u << shift) - 1)) > half ||
		    ((m & ((1u << shift) - 1)) == half && (r & 1)))
			r++;
		return (uint16_t)(sign | r);
	}
	{
		uint32_t h = sign | ((uint32_t)exp << 10) | (mant >> 13);
		uint32_t rest = mant & 0x1fff;
		if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
			h++; /* may carry into the exponent: correct */
		return (uint16_t)h;
	}
}

float autosync_rt_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f,
		 mant = h & 0x3ff;

	if (exp == 0x1f)
		return from_bits(sign | 0x7f800000 | (mant << 13));
	if (exp == 0) {
		float v;
		if (!mant)
			return from_bits(sign);
		v = (float)mant / 16777216.0f; /* mant x 2^-24 */
		return sign ? -v : v;
	}
	return from_bits(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

uint16_t autosync_rt_f32_to_bf16(float f)
{
	uint32_t x = bits(f);

	if ((x & 0x7f800000) == 0x7f800000 && (x & 0x7fffff))
		return (uint16_t)((x >> 16) | 0x40); /* quiet NaN */
	x += 0x7fff + ((x >> 16) & 1);
	return (uint16_t)(x >> 16);
}

float autosync_rt_bf16_to_f32(uint16_t h)
{
	return from_bits((uint32_t)h << 16);
}
