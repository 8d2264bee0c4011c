__kernel void decompress(__global long *_kernel_context, __constant uchar *_constant_region, __local uchar *_local_region, __global int *_atomics, __global uchar *kvFloats, __global uchar *kvHalves, __global uchar *kvBytes, __private int dtype, __global uchar *wkvB, __global uchar *kvFull, __global uchar *seqStart, __private int batch, __private int tokens, __private int capacity, __private int heads, __private int dn, __private int dv, __private int dc, __private int dr)
{
  float f_35, f_28, f_42, f_41; 
  ulong ul_15, ul_0, ul_48, ul_1, ul_2, ul_34, ul_40, ul_3; 
  bool b_26; 
  int i_51, i_49, i_50, i_43, i_44, i_36, i_27, i_29, i_30, i_23, i_24, i_25, i_19, i_20, i_21, i_22, i_16, i_17, i_18, i_11, i_7, i_8, i_9, i_10, i_4, i_5, i_6; 
  long l_33, l_39, l_38, l_37, l_12, l_32, l_31, l_47, l_14, l_46, l_13, l_45; 

  // BLOCK 0
  ul_0  =  (ulong) kvFloats;
  ul_1  =  (ulong) wkvB;
  ul_2  =  (ulong) kvFull;
  ul_3  =  (ulong) seqStart;
  i_4  =  get_global_size(2);
  i_5  =  get_global_size(1);
  i_6  =  get_global_size(0);
  i_7  =  get_global_id(2);
  i_8  =  get_global_id(1);
  i_9  =  get_global_id(0);
  // BLOCK 1 MERGES [0 14 ]
  i_10  =  i_9;
  for(;i_10 < 1;)
  {
    // BLOCK 2
    i_11  =  i_10 << 8;
    l_12  =  (long) i_10;
    l_13  =  l_12 << 2;
    l_14  =  l_13 + 16L;
    ul_15  =  ul_3 + l_14;
    // BLOCK 3 MERGES [2 13 ]
    i_16  =  i_8;
    for(;i_16 < 256;)
    {
      // BLOCK 4
      i_17  =  i_11 + i_16;
      i_18  =  i_17 << 12;
      i_19  =  i_17 << 9;
      i_20  =  i_17 << 6;
      i_21  =  i_19 + i_20;
      // BLOCK 5 MERGES [4 12 ]
      i_22  =  i_7;
      for(;i_22 < 4096;)
      {
        // BLOCK 6
        i_23  =  *((__global int *) ul_15);
        i_24  =  i_23 + 1;
        i_25  =  i_4 + i_22;
        b_26  =  i_16 < i_24;
        if(b_26)
        {
          // BLOCK 7
          i_27  =  i_22 << 9;
          // BLOCK 8 MERGES [7 9 ]
          f_28  =  0.0F;
          i_29  =  0;
          for(;i_29 < 512;)
          {
            // BLOCK 9
            i_30  =  i_27 + i_29;
            l_31  =  (long) i_30;
            l_32  =  l_31 << 2;
            l_33  =  l_32 + 16L;
            ul_34  =  ul_1 + l_33;
            f_35  =  *((__global float *) ul_34);
            i_36  =  i_21 + i_29;
            l_37  =  (long) i_36;
            l_38  =  l_37 << 2;
            l_39  =  l_38 + 16L;
            ul_40  =  ul_0 + l_39;
            f_41  =  *((__global float *) ul_40);
            f_42  =  fma(f_35, f_41, f_28);
            i_43  =  i_29 + 1;
            f_28  =  f_42;
            i_29  =  i_43;
          }  // B8
          // BLOCK 10
          i_44  =  i_18 + i_22;
          l_45  =  (long) i_44;
          l_46  =  l_45 << 2;
          l_47  =  l_46 + 16L;
          ul_48  =  ul_2 + l_47;
          *((__global float *) ul_48)  =  f_28;
        }  // B6
        else
        {
          // BLOCK 11
        }  // B6
        // BLOCK 12 MERGES [11 10 ]
        i_49  =  i_25;
        i_22  =  i_49;
      }  // B5
      // BLOCK 13
      i_50  =  i_5 + i_16;
      i_16  =  i_50;
    }  // B3
    // BLOCK 14
    i_51  =  i_6 + i_10;
    i_10  =  i_51;
  }  // B1
  // BLOCK 15
  return;
}
