__kernel void combine(__global long *_kernel_context, __constant uchar *_constant_region, __local uchar *_local_region, __global int *_atomics, __global uchar *oPart, __global uchar *lsePart, __global uchar *oLat, __private int rows, __private int heads, __private int numSplits, __private int dc)
{
  float f_20, f_19, f_35, f_34, f_33, f_32, f_29, f_28, f_26; 
  double d_31, d_30; 
  ulong ul_0, ul_1, ul_17, ul_2, ul_27, ul_25; 
  int i_21, i_18, i_11, i_12, i_13, i_7, i_8, i_9, i_10, i_3, i_4, i_36, i_5, i_37, i_6, i_38; 
  long l_24, l_23, l_22, l_16, l_15, l_14; 

  // BLOCK 0
  ul_0  =  (ulong) oPart;
  ul_1  =  (ulong) lsePart;
  ul_2  =  (ulong) oLat;
  i_3  =  get_global_size(2);
  i_4  =  get_global_size(1);
  i_5  =  get_global_size(0);
  i_6  =  get_global_id(2);
  i_7  =  get_global_id(1);
  i_8  =  get_global_id(0);
  // BLOCK 1 MERGES [0 8 ]
  i_9  =  i_8;
  for(;i_9 < 1;)
  {
    // BLOCK 2
    i_10  =  i_9 << 4;
    // BLOCK 3 MERGES [2 7 ]
    i_11  =  i_7;
    for(;i_11 < 16;)
    {
      // BLOCK 4
      i_12  =  i_10 + i_11;
      i_13  =  i_12 << 9;
      l_14  =  (long) i_12;
      l_15  =  l_14 << 2;
      l_16  =  l_15 + 16L;
      ul_17  =  ul_1 + l_16;
      // BLOCK 5 MERGES [4 6 ]
      i_18  =  i_6;
      for(;i_18 < 512;)
      {
        // BLOCK 6
        f_19  =  *((__global float *) ul_17);
        f_20  =  *((__global float *) ul_17);
        i_21  =  i_13 + i_18;
        l_22  =  (long) i_21;
        l_23  =  l_22 << 2;
        l_24  =  l_23 + 16L;
        ul_25  =  ul_0 + l_24;
        f_26  =  *((__global float *) ul_25);
        ul_27  =  ul_2 + l_24;
        f_28  =  fmax(-1.0E30F, f_19);
        f_29  =  f_20 - f_28;
        d_30  =  (double) f_29;
        d_31  =  exp(d_30);
        f_32  =  (float) d_31;
        f_33  =  fma(f_26, f_32, 0.0F);
        f_34  =  f_32 + 0.0F;
        f_35  =  f_33 / f_34;
        *((__global float *) ul_27)  =  f_35;
        i_36  =  i_3 + i_18;
        i_18  =  i_36;
      }  // B5
      // BLOCK 7
      i_37  =  i_4 + i_11;
      i_11  =  i_37;
    }  // B3
    // BLOCK 8
    i_38  =  i_5 + i_9;
    i_9  =  i_38;
  }  // B1
  // BLOCK 9
  return;
}
