__kernel void absorbQuery(__global long *_kernel_context, __constant uchar *_constant_region, __local uchar *_local_region, __global int *_atomics, __global uchar *q, __global uchar *wkvB, __global uchar *qLat, __private int rows, __private int heads, __private int dn, __private int dr, __private int dv, __private int dc)
{
  float f_19, f_35, f_34, f_28; 
  ulong ul_0, ul_1, ul_33, ul_2, ul_27, ul_41; 
  int i_43, i_44, i_42, i_36, i_37, i_29, i_23, i_20, i_21, i_22, i_15, i_16, i_17, i_18, i_11, i_12, i_13, i_14, i_7, i_8, i_9, i_10, i_3, i_4, i_5, i_6; 
  long l_24, l_40, l_39, l_38, l_26, l_25, l_32, l_31, l_30; 

  // BLOCK 0
  ul_0  =  (ulong) q;
  ul_1  =  (ulong) wkvB;
  ul_2  =  (ulong) qLat;
  i_3  =  get_global_size(2);
  i_4  =  get_global_size(1);
  i_5  =  get_global_size(0);
  i_6  =  get_global_id(2);
  i_7  =  get_global_id(1);
  i_8  =  get_global_id(0);
  // BLOCK 1 MERGES [0 11 ]
  i_9  =  i_8;
  for(;i_9 < 1;)
  {
    // BLOCK 2
    i_10  =  i_9 << 4;
    // BLOCK 3 MERGES [2 10 ]
    i_11  =  i_7;
    for(;i_11 < 16;)
    {
      // BLOCK 4
      i_12  =  i_10 + i_11;
      i_13  =  i_12 << 9;
      i_14  =  i_12 << 7;
      i_15  =  i_12 << 6;
      i_16  =  i_14 + i_15;
      i_17  =  i_11 << 17;
      // BLOCK 5 MERGES [4 9 ]
      i_18  =  i_6;
      for(;i_18 < 512;)
      {
        // BLOCK 6
        // BLOCK 7 MERGES [6 8 ]
        f_19  =  0.0F;
        i_20  =  0;
        for(;i_20 < 128;)
        {
          // BLOCK 8
          i_21  =  i_20 << 9;
          i_22  =  i_21 + i_17;
          i_23  =  i_22 + i_18;
          l_24  =  (long) i_23;
          l_25  =  l_24 << 2;
          l_26  =  l_25 + 16L;
          ul_27  =  ul_1 + l_26;
          f_28  =  *((__global float *) ul_27);
          i_29  =  i_16 + i_20;
          l_30  =  (long) i_29;
          l_31  =  l_30 << 2;
          l_32  =  l_31 + 16L;
          ul_33  =  ul_0 + l_32;
          f_34  =  *((__global float *) ul_33);
          f_35  =  fma(f_28, f_34, f_19);
          i_36  =  i_20 + 1;
          f_19  =  f_35;
          i_20  =  i_36;
        }  // B7
        // BLOCK 9
        i_37  =  i_13 + i_18;
        l_38  =  (long) i_37;
        l_39  =  l_38 << 2;
        l_40  =  l_39 + 16L;
        ul_41  =  ul_2 + l_40;
        *((__global float *) ul_41)  =  f_19;
        i_42  =  i_3 + i_18;
        i_18  =  i_42;
      }  // B5
      // BLOCK 10
      i_43  =  i_4 + i_11;
      i_11  =  i_43;
    }  // B3
    // BLOCK 11
    i_44  =  i_5 + i_9;
    i_9  =  i_44;
  }  // B1
  // BLOCK 12
  return;
}
