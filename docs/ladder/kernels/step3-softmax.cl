__kernel void softmax(__global long *_kernel_context, __constant uchar *_constant_region, __local uchar *_local_region, __global int *_atomics, __global uchar *scores, __global uchar *seqStart, __private int batch, __private int tokens, __private int capacity, __private int heads)
{
  float f_38, f_35, f_34, f_17, f_49, f_48, f_47, f_27, f_25, f_24, f_39; 
  double d_37, d_36; 
  ulong ul_0, ul_1, ul_33, ul_11, ul_46, ul_23; 
  int i_26, i_19, i_51, i_52, i_15, i_16, i_18, i_50, i_12, i_13, i_14, i_7, i_40, i_41, i_42, i_3, i_4, i_5, i_6, i_2, i_28, i_29; 
  long l_20, l_8, l_22, l_21, l_44, l_43, l_10, l_9, l_32, l_31, l_30, l_45; 

  // BLOCK 0
  ul_0  =  (ulong) scores;
  ul_1  =  (ulong) seqStart;
  i_2  =  get_global_size(1);
  i_3  =  get_global_size(0);
  i_4  =  get_global_id(1);
  i_5  =  get_global_id(0);
  // BLOCK 1 MERGES [0 14 ]
  i_6  =  i_5;
  for(;i_6 < 1;)
  {
    // BLOCK 2
    i_7  =  i_6 << 4;
    l_8  =  (long) i_6;
    l_9  =  l_8 << 2;
    l_10  =  l_9 + 16L;
    ul_11  =  ul_1 + l_10;
    // BLOCK 3 MERGES [2 13 ]
    i_12  =  i_4;
    for(;i_12 < 16;)
    {
      // BLOCK 4
      i_13  =  *((__global int *) ul_11);
      i_14  =  i_13 + 1;
      i_15  =  i_7 + i_12;
      i_16  =  i_15 << 8;
      // BLOCK 5 MERGES [4 6 ]
      f_17  =  -1.0E30F;
      i_18  =  0;
      for(;i_18 < i_14;)
      {
        // BLOCK 6
        i_19  =  i_16 + i_18;
        l_20  =  (long) i_19;
        l_21  =  l_20 << 2;
        l_22  =  l_21 + 16L;
        ul_23  =  ul_0 + l_22;
        f_24  =  *((__global float *) ul_23);
        f_25  =  fmax(f_17, f_24);
        i_26  =  i_18 + 1;
        f_17  =  f_25;
        i_18  =  i_26;
      }  // B5
      // BLOCK 7
      // BLOCK 8 MERGES [7 9 ]
      f_27  =  0.0F;
      i_28  =  0;
      for(;i_28 < i_14;)
      {
        // BLOCK 9
        i_29  =  i_28 + i_16;
        l_30  =  (long) i_29;
        l_31  =  l_30 << 2;
        l_32  =  l_31 + 16L;
        ul_33  =  ul_0 + l_32;
        f_34  =  *((__global float *) ul_33);
        f_35  =  f_34 - f_17;
        d_36  =  (double) f_35;
        d_37  =  exp(d_36);
        f_38  =  (float) d_37;
        *((__global float *) ul_33)  =  f_38;
        f_39  =  f_27 + f_38;
        i_40  =  i_28 + 1;
        f_27  =  f_39;
        i_28  =  i_40;
      }  // B8
      // BLOCK 10
      // BLOCK 11 MERGES [10 12 ]
      i_41  =  0;
      for(;i_41 < i_14;)
      {
        // BLOCK 12
        i_42  =  i_41 + i_16;
        l_43  =  (long) i_42;
        l_44  =  l_43 << 2;
        l_45  =  l_44 + 16L;
        ul_46  =  ul_0 + l_45;
        f_47  =  *((__global float *) ul_46);
        f_48  =  1.0F / f_27;
        f_49  =  f_48 * f_47;
        *((__global float *) ul_46)  =  f_49;
        i_50  =  i_41 + 1;
        i_41  =  i_50;
      }  // B11
      // BLOCK 13
      i_51  =  i_2 + i_12;
      i_12  =  i_51;
    }  // B3
    // BLOCK 14
    i_52  =  i_3 + i_6;
    i_6  =  i_52;
  }  // B1
  // BLOCK 15
  return;
}
