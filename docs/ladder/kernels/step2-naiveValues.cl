__kernel void naiveValues(__global long *_kernel_context, __constant uchar *_constant_region, __local uchar *_local_region, __global int *_atomics, __global uchar *probs, __global uchar *kvFull, __global uchar *o, __global uchar *seqStart, __private int batch, __private int tokens, __private int capacity, __private int heads, __private int dn, __private int dv)
{
  float f_32, f_43, f_42, f_25; 
  ulong ul_31, ul_0, ul_16, ul_1, ul_49, ul_2, ul_41, ul_3; 
  int i_51, i_52, i_50, i_44, i_45, i_35, i_36, i_37, i_33, i_34, i_27, i_23, i_24, i_26, i_19, i_20, i_21, i_22, i_17, i_18, i_11, i_12, i_7, i_8, i_9, i_10, i_4, i_5, i_6; 
  long l_40, l_39, l_38, l_28, l_48, l_15, l_47, l_14, l_30, l_46, l_13, l_29; 

  // BLOCK 0
  ul_0  =  (ulong) probs;
  ul_1  =  (ulong) kvFull;
  ul_2  =  (ulong) o;
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
      i_19  =  i_18 << 7;
      i_20  =  i_17 << 8;
      i_21  =  i_18 << 8;
      // BLOCK 5 MERGES [4 9 ]
      i_22  =  i_7;
      for(;i_22 < 128;)
      {
        // BLOCK 6
        i_23  =  *((__global int *) ul_16);
        i_24  =  i_23 + 1;
        // BLOCK 7 MERGES [6 8 ]
        f_25  =  0.0F;
        i_26  =  0;
        for(;i_26 < i_24;)
        {
          // BLOCK 8
          i_27  =  i_21 + i_26;
          l_28  =  (long) i_27;
          l_29  =  l_28 << 2;
          l_30  =  l_29 + 16L;
          ul_31  =  ul_0 + l_30;
          f_32  =  *((__global float *) ul_31);
          i_33  =  i_11 + i_26;
          i_34  =  i_33 << 12;
          i_35  =  i_34 + i_20;
          i_36  =  i_35 + 128;
          i_37  =  i_36 + i_22;
          l_38  =  (long) i_37;
          l_39  =  l_38 << 2;
          l_40  =  l_39 + 16L;
          ul_41  =  ul_1 + l_40;
          f_42  =  *((__global float *) ul_41);
          f_43  =  fma(f_32, f_42, f_25);
          i_44  =  i_26 + 1;
          f_25  =  f_43;
          i_26  =  i_44;
        }  // B7
        // BLOCK 9
        i_45  =  i_19 + i_22;
        l_46  =  (long) i_45;
        l_47  =  l_46 << 2;
        l_48  =  l_47 + 16L;
        ul_49  =  ul_2 + l_48;
        *((__global float *) ul_49)  =  f_25;
        i_50  =  i_4 + i_22;
        i_22  =  i_50;
      }  // B5
      // BLOCK 10
      i_51  =  i_5 + i_17;
      i_17  =  i_51;
    }  // B3
    // BLOCK 11
    i_52  =  i_6 + i_10;
    i_10  =  i_52;
  }  // B1
  // BLOCK 12
  return;
}
