# The suite's longest tests and their seconds, the COST CTest orders them by
# (cmake/lockbench.cmake, lockbench_test_costs): the longest start first, so
# that none is the tail of its server set. Measured on 2026-12-03
# (`scripts/test -L server`, 2 server sets, load average 10 to 15), the
# browser tests in the clean-clone run of 2026-12-02. A test not listed counts
# as its group's guess (9 s on a server set, 8 s a browser test, 5 s another
# server test), below every one here. Refresh from a run's
# build/Testing/Temporary/CTestCostData.txt (name, runs, mean seconds) when a
# test of 10 s or more is added. TEST_NAME=SECONDS, whole seconds.
set(LOCKBENCH_TEST_COSTS
  JavaService.TheSimulatorPredictsHikariCPWithinThreePercentOfCountsAndTenOfP99BelowAndAboveSaturation=68
  CliPlanReal.TheRecommendedSettingsAreRunTimeScaledInTheRealWorldAndJudgedOnTheTargets=43
  RealEtcdPods.AHolderStoppedPastItsTtlIsStolenAndOnlyTheFencedVariantIsRefused=29
  RealPodsRecovery.AFrozenPodsRowLockIsFreedDuringThePauseOnlyByTheIdleInTransactionTimeout=24
  Runners.ThreeRunnersAtAThirdOfTheRateGiveTheVerdictsOfOneRunnerAtTheFullRate=18
  HostileClients.ServeKeepsHealthAndMemoryThroughSlowlorisBigBodiesHeaderFloodsAndSmuggling=17
  CliCheckoutReal.SplitTxAndOutboxChargeEveryOrderOnceUnderFaultsDuplicatesAndTimeouts=17
  docs_shell_blocks_run=17
  RealProbes.TheSimulatorAndTheRealPodsAgreeOnRecoveryAfterAPartnerSlowdownThatEnds=17
  RealPods.AKilledPodsXactLockIsFreedAtOnceWhileItsLeaseWaitsForTheTtl=17
  RealVirtualThreads.AServePodWithEveryCarrierPinnedFailsALivenessProbeWithoutTheDatabase=16
  RealEtcdLease.IsStolenWithATtlBelowTheCallAndFencingRefusesTheStaleHolder=16
  KilledRunner.ItsRowsAreReclaimedAtTheNextRunStartAndALiveRunIsUntouched=15
  RealVirtualThreads.SynchronizedBelowJdk24PinsTheCarriersOfThreadPodsAsInTheSimulator=15
  RealHostLoss.KeepalivesFreeALostHostsRowLockWhileTheDefaultsKeepItUntilTheHostReturns=15
  RealPods.APodWhoseApplicationClockRunsAheadStealsLiveLeasesUnderAppClockOnly=13
  RealRenewalPods.ARenewedShortLeaseIsNotStolenBySlowCallsButIsByAPauseLongerThanItsTtl=12
  RealRenewalPods.RedisLeaseOnTwoProcessPodsIsStolenAcrossThemBelowTheCallAndKeptByRenewal=12
  RealProbes.HeldTxWithALivenessProbeWithoutTheDatabaseRestartsNoPod=12
  RealCounting.ProbesThatTimeOutKeepTheirPeriodAndCountAsTheSimulatorsDo=11
  RealPods.APausedPodsLeaseIsStolenAndFencedWithAnEnforcingPartnerRefusesTheStaleCall=11
  RealProbes.RowLeaseUnderTheSameLoadAndProbesRestartsNoPod=10
  Playground.EachLessonShowsWhatItRanItsStoryAndPassesAxeAtAPhonesWidth=25
  Playground.EveryLessonEqualsTheNativeRunOfItsCommandLine=16
)
