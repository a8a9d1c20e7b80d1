"""``ferrotorch.nn``: modules, parameters, functional layers and losses."""

from .parameter import Parameter  # noqa: F401
from .modules import (  # noqa: F401
    Module, Sequential, ModuleList, Identity, Linear, Conv2d, BatchNorm1d, BatchNorm2d, LayerNorm,
    Embedding, Dropout, Flatten, MaxPool2d, AvgPool2d, ReLU, Sigmoid, Tanh, GELU, SiLU, LeakyReLU,
    Softmax, LogSoftmax, MSELoss, L1Loss, NLLLoss, CrossEntropyLoss, BCELoss, BCEWithLogitsLoss,
)
from .modules import (  # noqa: F401
    Conv1d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d, BatchNorm3d,
    InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, GroupNorm,
    MaxPool1d, MaxPool3d, AvgPool1d, AvgPool3d, AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d,
    AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d, Upsample, UpsamplingNearest2d, UpsamplingBilinear2d,
    PixelShuffle, PixelUnshuffle, ConstantPad1d, ConstantPad2d, ConstantPad3d, ZeroPad1d, ZeroPad2d, ZeroPad3d,
    ReflectionPad1d, ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d,
    CircularPad1d, CircularPad2d, CircularPad3d, Dropout1d, Dropout2d, Dropout3d, AlphaDropout, FeatureAlphaDropout,
    ReLU6, SELU, CELU, ELU, Mish, Hardsigmoid, Hardswish, Hardtanh, Softplus, Softsign, LogSigmoid, Tanhshrink,
    Softshrink, Hardshrink, Threshold, GLU, PReLU, Softmin,
)
from ._loss_modules import (  # noqa: F401
    SmoothL1Loss, HuberLoss, KLDivLoss, SoftMarginLoss, CosineEmbeddingLoss, MarginRankingLoss, HingeEmbeddingLoss,
    TripletMarginLoss, TripletMarginWithDistanceLoss, PoissonNLLLoss, GaussianNLLLoss, MultiMarginLoss,
    MultiLabelMarginLoss, MultiLabelSoftMarginLoss, CosineSimilarity, PairwiseDistance, CTCLoss,
    NLLLoss2d, LinearCrossEntropyLoss, AdaptiveLogSoftmaxWithLoss,
)
from ._losses import LinearCrossEntropyOptions  # noqa: F401
from ._containers import ModuleDict, ParameterList, ParameterDict, Buffer  # noqa: F401
from .parameter import UninitializedParameter, UninitializedBuffer  # noqa: F401
from ._lazy import (  # noqa: F401
    LazyLinear, LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d,
    LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d,
)
from ._layers import (  # noqa: F401
    Unflatten, Bilinear, ChannelShuffle, Softmax2d, RMSNorm, LocalResponseNorm, CrossMapLRN2d, Container,
)
from ._rnn import RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell  # noqa: F401
from ._transformer import (  # noqa: F401
    MultiheadAttention, Transformer, TransformerEncoder, TransformerDecoder, TransformerEncoderLayer,
    TransformerDecoderLayer,
)
from ._layers_extra import (  # noqa: F401
    Fold, Unfold, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d, LPPool1d, LPPool2d, LPPool3d, FractionalMaxPool2d,
    FractionalMaxPool3d, RReLU, EmbeddingBag, SyncBatchNorm,
)
from . import parallel  # noqa: F401
from .parallel import DataParallel  # noqa: F401
from . import functional  # noqa: F401
from . import init  # noqa: F401
from . import utils  # noqa: F401

from ._transformer import multi_head_attention_forward as _mha_forward  # noqa: E402
functional.multi_head_attention_forward = _mha_forward
