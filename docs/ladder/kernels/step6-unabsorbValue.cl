__kernel void unabsorbValue(__global long *_kernel_context, __constant uchar *_constant_region, __local uchar *_local_region, __global int *_atomics, __global uchar *oLat, __global uchar *wkvB, __global uchar *o, __private int rows, __private int heads, __private int dn, __private int dv, __private int dc)
{
  float f_20, f_34, f_33, f_27; 
  ulong ul_0, ul_32, ul_1, ul_2, ul_40, ul_26; 
  int i_43, i_41, i_42, i_35, i_36, i_28, i_19, i_21, i_22, i_15, i_16, i_17, i_18, i_11, i_12, i_13, i_14, i_7, i_8, i_9, i_10, i_3, i_4, i_5, i_6; 
  long l_24, l_23, l_39, l_38, l_37, l_25, l_31, l_30, l_29; 

  // BLOCK 0
  ul_0  =  (ulong) oLat;
  ul_1  =  (ulong) wkvB;
  ul_2  =  (ulong) o;
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
      i_13  =  i_12 << 7;
      i_14  =  i_12 << 9;
      i_15  =  i_11 << 8;
      i_16  =  i_15 + 128;
      // BLOCK 5 MERGES [4 9 ]
      i_17  =  i_6;
      for(;i_17 < 128;)
      {
        // BLOCK 6
        i_18  =  i_16 + i_17;
        i_19  =  i_18 << 9;
        // BLOCK 7 MERGES [6 8 ]
        f_20  =  0.0F;
        i_21  =  0;
        for(;i_21 < 512;)
        {
          // BLOCK 8
          i_22  =  i_19 + i_21;
          l_23  =  (long) i_22;
          l_24  =  l_23 << 2;
          l_25  =  l_24 + 16L;
          ul_26  =  ul_1 + l_25;
          f_27  =  *((__global float *) ul_26);
          i_28  =  i_14 + i_21;
          l_29  =  (long) i_28;
          l_30  =  l_29 << 2;
          l_31  =  l_30 + 16L;
          ul_32  =  ul_0 + l_31;
          f_33  =  *((__global float *) ul_32);
          f_34  =  fma(f_27, f_33, f_20);
          i_35  =  i_21 + 1;
          f_20  =  f_34;
          i_21  =  i_35;
        }  // B7
        // BLOCK 9
        i_36  =  i_13 + i_17;
        l_37  =  (long) i_36;
        l_38  =  l_37 << 2;
        l_39  =  l_38 + 16L;
        ul_40  =  ul_2 + l_39;
        *((__global float *) ul_40)  =  f_20;
        i_41  =  i_3 + i_17;
        i_17  =  i_41;
      }  // B5
      // BLOCK 10
      i_42  =  i_4 + i_11;
      i_11  =  i_42;
    }  // B3
    // BLOCK 11
    i_43  =  i_5 + i_9;
    i_9  =  i_43;
  }  // B1
  // BLOCK 12
  return;
}
