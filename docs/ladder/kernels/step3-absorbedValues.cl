__kernel void absorbedValues(__global long *_kernel_context, __constant uchar *_constant_region, __local uchar *_local_region, __global int *_atomics, __global uchar *probs, __global uchar *kvF32, __global uchar *kvBf16, __global uchar *kvInt8, __private int dtype, __global uchar *oLat, __global uchar *seqStart, __private int batch, __private int tokens, __private int capacity, __private int heads, __private int dc, __private int dr)
{
  float f_31, f_42, f_41, f_24; 
  ulong ul_0, ul_16, ul_48, ul_1, ul_2, ul_30, ul_40, ul_3; 
  int i_51, i_49, i_50, i_43, i_44, i_35, i_36, i_32, i_33, i_34, i_23, i_25, i_26, i_19, i_20, i_21, i_22, i_17, i_18, i_11, i_12, i_7, i_8, i_9, i_10, i_4, i_5, i_6; 
  long l_39, l_38, l_37, l_28, l_27, l_15, l_47, l_14, l_46, l_13, l_29, l_45; 

  // BLOCK 0
  ul_0  =  (ulong) probs;
  ul_1  =  (ulong) kvF32;
  ul_2  =  (ulong) oLat;
  ul_3  =  (ulong) seqStart;
  i_4  =  get_global_size(2);
  i_5  =  get_global_size(1);
  i_6  =  get_global_size(0);
  i_7  =  get_global_id(2);
  i_8  =  get_global_id(1);
  i_9  =  get_global_id(0);
  // BLOCK 1 MERGES [0 11 ]
  i_10  =  i_9;
  for(;i_10 < 1;)
  {
    // BLOCK 2
    i_11  =  i_10 << 8;
    i_12  =  i_10 << 4;
    l_13  =  (long) i_10;
    l_14  =  l_13 << 2;
    l_15  =  l_14 + 16L;
    ul_16  =  ul_3 + l_15;
    // BLOCK 3 MERGES [2 10 ]
    i_17  =  i_8;
    for(;i_17 < 16;)
    {
      // BLOCK 4
      i_18  =  i_12 + i_17;
      i_19  =  i_18 << 9;
      i_20  =  i_18 << 8;
      // BLOCK 5 MERGES [4 9 ]
      i_21  =  i_7;
      for(;i_21 < 512;)
      {
        // BLOCK 6
        i_22  =  *((__global int *) ul_16);
        i_23  =  i_22 + 1;
        // BLOCK 7 MERGES [6 8 ]
        f_24  =  0.0F;
        i_25  =  0;
        for(;i_25 < i_23;)
        {
          // BLOCK 8
          i_26  =  i_20 + i_25;
          l_27  =  (long) i_26;
          l_28  =  l_27 << 2;
          l_29  =  l_28 + 16L;
          ul_30  =  ul_0 + l_29;
          f_31  =  *((__global float *) ul_30);
          i_32  =  i_11 + i_25;
          i_33  =  i_32 << 9;
          i_34  =  i_32 << 6;
          i_35  =  i_33 + i_34;
          i_36  =  i_35 + i_21;
          l_37  =  (long) i_36;
          l_38  =  l_37 << 2;
          l_39  =  l_38 + 16L;
          ul_40  =  ul_1 + l_39;
          f_41  =  *((__global float *) ul_40);
          f_42  =  fma(f_31, f_41, f_24);
          i_43  =  i_25 + 1;
          f_24  =  f_42;
          i_25  =  i_43;
        }  // B7
        // BLOCK 9
        i_44  =  i_19 + i_21;
        l_45  =  (long) i_44;
        l_46  =  l_45 << 2;
        l_47  =  l_46 + 16L;
        ul_48  =  ul_2 + l_47;
        *((__global float *) ul_48)  =  f_24;
        i_49  =  i_4 + i_21;
        i_21  =  i_49;
      }  // B5
      // BLOCK 10
      i_50  =  i_5 + i_17;
      i_17  =  i_50;
    }  // B3
    // BLOCK 11
    i_51  =  i_6 + i_10;
    i_10  =  i_51;
  }  // B1
  // BLOCK 12
  return;
}
