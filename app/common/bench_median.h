/* SPDX-License-Identifier: BSD-3-Clause */
/* The median of a benchmark's repetitions, shared by the benchmark tools. Pure C. */
#ifndef AMRMA_BENCH_MEDIAN_H
#define AMRMA_BENCH_MEDIAN_H

#include <stdlib.h>

static inline int
bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of v[0..n-1], n > 0; sorts v. */
static inline double
bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
