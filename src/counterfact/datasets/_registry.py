"""What is known about every dataset without loading it: provenance, licence,
size with the default options, target, the papers that use it, loader options."""

from __future__ import annotations

from ._common import DatasetInfo, Option

_UCI = "CC BY 4.0 (UCI Machine Learning Repository)"
_NOT_BUNDLED = "not bundled"

_PART = Option(
    "part", "all", "which raw file(s): 'train', 'test' or 'all' (both)", ("train", "test", "all")
)

_INFOS: tuple[DatasetInfo, ...] = (
    DatasetInfo(
        name="german_credit",
        title="Statlog (German Credit Data)",
        description=(
            "1,000 credit applicants, 20 attributes (A-codes decoded to german.doc's "
            "labels); good vs bad credit risk. Actionability as a lender advises: credit "
            "history immutable (a record); checking and savings balance, job and employment "
            "only improve; loan amount and existing credits only go down; sex, status, "
            "purpose, foreign worker, dependants immutable; age and residence only grow."
        ),
        citation=(
            "Hofmann, H. (1994). Statlog (German Credit Data) [Dataset]. UCI Machine Learning "
            "Repository. https://doi.org/10.24432/C5NC77"
        ),
        licence=_UCI,
        source="https://archive.ics.uci.edu/dataset/144",
        bundled=True,
        n_rows=1000,
        n_features=20,
        target="credit_risk",
        positive="good credit risk (700 of 1,000)",
        favourable_class=1,
        papers=("CE-OCL (case study)", "L2C"),
        loader="_credit:load_german_credit",
        files=("german.data.gz",),
        aliases=("german", "credit_g", "statlog_german"),
    ),
    DatasetInfo(
        name="adult",
        title="Adult (Census Income)",
        description=(
            "1994 US census extract; income above 50K USD. 12 features (fnlwgt and "
            "education-num dropped)."
        ),
        citation=(
            "Becker, B. & Kohavi, R. (1996). Adult [Dataset]. UCI Machine Learning Repository. "
            "https://doi.org/10.24432/C5XW20"
        ),
        licence=_UCI,
        source="https://archive.ics.uci.edu/dataset/2",
        bundled=True,
        n_rows=45222,
        n_features=12,
        target="income",
        positive=">50K (11,208 of 45,222)",
        favourable_class=1,
        papers=("MACE", "CE-OCL (appendix, via CARLA)"),
        loader="_social:load_adult",
        files=("adult.data.gz", "adult.test.gz"),
        options=(
            _PART,
            Option(
                "missing",
                "drop",
                "rows with '?': 'drop' them (MACE) or keep them as the level 'Unknown' "
                "('category')",
                ("drop", "category"),
            ),
        ),
        aliases=("census", "census_income"),
    ),
    DatasetInfo(
        name="compas",
        title="COMPAS two-year recidivism (ProPublica)",
        description=(
            "Broward County defendants screened by COMPAS in 2013-2014, ProPublica's "
            "filters; recidivism within two years. Age, sex and race immutable; prior and "
            "juvenile counts only grow (a record); charge degree and days held free."
        ),
        citation=(
            "Larson, J., Mattu, S., Kirchner, L. & Angwin, J. (2016). How we analyzed the "
            "COMPAS recidivism algorithm. ProPublica. "
            "https://github.com/propublica/compas-analysis"
        ),
        licence=(
            "Published by ProPublica for reuse with attribution (the repository has no LICENSE "
            "file; see ProPublica's data-store terms)"
        ),
        source="https://github.com/propublica/compas-analysis (compas-scores-two-years.csv)",
        bundled=True,
        n_rows=6172,
        n_features=9,
        target="two_year_recid",
        positive="reoffended within two years (2,809 of 6,172)",
        favourable_class=0,
        papers=("MACE", "CE-OCL", "MD-PSO"),
        loader="_social:load_compas",
        files=("compas-scores-two-years.csv.gz",),
        options=(
            Option(
                "variant",
                "default",
                "'default': ProPublica filters, 9 features; 'mace': also only "
                "African-American and Caucasian defendants (5,278 rows), MACE's 5 features",
                ("default", "mace"),
            ),
        ),
    ),
    DatasetInfo(
        name="default_credit_taiwan",
        title="Default of credit card clients (Taiwan)",
        description=(
            "30,000 Taiwanese credit card holders (2005); default payment next month. "
            "MACE's 'Credit' dataset. Age, sex, marital status and the six months of "
            "repayments, bills and payments (a record) immutable; the credit limit only "
            "goes down."
        ),
        citation=(
            "Yeh, I.-C. & Lien, C.-h. (2009). The comparisons of data mining techniques for the "
            "predictive accuracy of probability of default of credit card clients. Expert "
            "Systems with Applications 36(2), 2473-2480. Dataset: "
            "https://doi.org/10.24432/C55S3H"
        ),
        licence=_UCI,
        source="https://archive.ics.uci.edu/dataset/350",
        bundled=True,
        n_rows=30000,
        n_features=23,
        target="default",
        positive="default next month (6,636 of 30,000)",
        favourable_class=0,
        papers=("MACE",),
        loader="_credit:load_default_credit_taiwan",
        files=("default_of_credit_card_clients.csv.gz",),
        aliases=("credit", "taiwan", "default_credit"),
    ),
    DatasetInfo(
        name="student_performance",
        title="Student Performance (Portuguese / Mathematics)",
        description=(
            "Secondary-school students of two Portuguese schools; final grade G3 at or "
            "above a threshold. Family circumstances and past facts immutable; failures "
            "only grow; alcohol use only goes down."
        ),
        citation=(
            "Cortez, P. & Silva, A. (2008). Using data mining to predict secondary school "
            "student performance. FUBUTEC 2008, 5-12. Dataset: https://doi.org/10.24432/C5TG7T"
        ),
        licence=_UCI,
        source="https://archive.ics.uci.edu/dataset/320",
        bundled=True,
        n_rows=649,
        n_features=30,
        target="high_grade",
        positive="G3 >= 12 (348 of 649)",
        favourable_class=1,
        papers=("L2C",),
        loader="_social:load_student_performance",
        files=("student-por.csv.gz", "student-mat.csv.gz"),
        options=(
            Option(
                "subject", "por", "'por' (Portuguese, L2C) or 'mat' (Mathematics)", ("por", "mat")
            ),
            Option("threshold", 12, "positive class: G3 >= threshold (L2C: 12)"),
            Option(
                "features",
                "all",
                "'all' 30 attributes, or L2C's 14 columns ('l2c')",
                ("all", "l2c"),
            ),
            Option(
                "grades",
                None,
                "include G1 and G2 (None: no for 'all', yes for 'l2c')",
                (None, True, False),
            ),
        ),
        aliases=("student",),
    ),
    DatasetInfo(
        name="graduate_admission",
        title="Graduate Admission 2",
        description=(
            "500 Indian applicants to Master's programmes; chance of admit at or above a "
            "threshold. University rating immutable; scores, statement, letters and GPA "
            "only improve."
        ),
        citation=(
            "Acharya, M. S., Armaan, A. & Antony, A. S. (2019). A comparison of regression "
            "models for prediction of graduate admissions. ICCIDS 2019. Kaggle 'Graduate "
            "Admission 2' v1.1"
        ),
        licence="CC0 1.0 as listed on the Kaggle page (not verified); cite Acharya et al. 2019",
        source=(
            "https://www.kaggle.com/datasets/mohansacharya/graduate-admissions "
            "(Admission_Predict_Ver1.1.csv)"
        ),
        bundled=True,
        n_rows=500,
        n_features=7,
        target="admit",
        positive="chance of admit >= 0.7 (300 of 500)",
        favourable_class=1,
        papers=("L2C (threshold 0.7)", "UFCE (threshold 0.6)"),
        loader="_social:load_graduate_admission",
        files=("Admission_Predict_Ver1.1.csv.gz",),
        options=(
            Option(
                "threshold", 0.7, "positive class: chance of admit >= threshold (L2C 0.7, UFCE 0.6)"
            ),
        ),
        aliases=("graduate", "admission", "grad"),
    ),
    DatasetInfo(
        name="wine_quality_red",
        title="Wine Quality (red)",
        description=(
            "1,599 Portuguese 'Vinho Verde' red wines, 11 physico-chemical tests; quality >= 6."
        ),
        citation=(
            "Cortez, P., Cerdeira, A., Almeida, F., Matos, T. & Reis, J. (2009). Modeling wine "
            "preferences by data mining from physicochemical properties. Decision Support "
            "Systems 47(4), 547-553. Dataset: https://doi.org/10.24432/C56S3T"
        ),
        licence=_UCI,
        source="https://archive.ics.uci.edu/dataset/186",
        bundled=True,
        n_rows=1599,
        n_features=11,
        target="good_quality",
        positive="quality >= 6 (855 of 1,599)",
        favourable_class=1,
        papers=("UFCE",),
        loader="_science:load_wine_quality_red",
        files=("winequality-red.csv.gz",),
        aliases=("wine", "red_wine"),
    ),
    DatasetInfo(
        name="bupa_liver",
        title="BUPA Liver Disorders",
        description=(
            "345 male patients: five blood tests and alcohol consumption; UCI's selector field "
            "as the class (as UFCE)."
        ),
        citation=(
            "BUPA Medical Research Ltd. (1990). Liver Disorders [Dataset]. UCI Machine Learning "
            "Repository. https://doi.org/10.24432/C54G67"
        ),
        licence=_UCI,
        source="https://archive.ics.uci.edu/dataset/60",
        bundled=True,
        n_rows=345,
        n_features=6,
        target="selector",
        positive="selector field = 2 (200 of 345; UFCE's 'no alcoholism')",
        favourable_class=1,
        papers=("UFCE",),
        loader="_science:load_bupa_liver",
        files=("bupa.data.gz",),
        aliases=("bupa", "liver"),
    ),
    DatasetInfo(
        name="hill_valley",
        title="Hill-Valley (with noise)",
        description="Curves of 100 noisy points forming a hill or a valley.",
        citation=(
            "Graham, L. & Oppacher, F. (2008). Hill-Valley [Dataset]. UCI Machine Learning "
            "Repository. https://doi.org/10.24432/C5JC8P"
        ),
        licence=_UCI,
        source="https://archive.ics.uci.edu/dataset/166",
        bundled=True,
        n_rows=1212,
        n_features=100,
        target="class",
        positive="hill (606 of 1,212)",
        favourable_class=None,
        papers=("MD-PSO",),
        loader="_science:load_hill_valley",
        files=("Hill_Valley_with_noise_Training.data.gz", "Hill_Valley_with_noise_Testing.data.gz"),
        options=(_PART,),
        aliases=("hillvalley",),
    ),
    DatasetInfo(
        name="arrhythmia",
        title="Cardiac Arrhythmia",
        description=(
            "452 ECG records, 279 attributes (17 constant ones dropped); normal vs arrhythmia."
        ),
        citation=(
            "Guvenir, H. A., Acar, B., Demiroz, G. & Cekin, A. (1997). A supervised machine "
            "learning algorithm for arrhythmia analysis. Computers in Cardiology 1997, 433-436. "
            "Dataset: https://doi.org/10.24432/C5BS32"
        ),
        licence=_UCI,
        source="https://archive.ics.uci.edu/dataset/5",
        bundled=True,
        n_rows=452,
        n_features=262,
        target="normal",
        positive="normal ECG, class 1 (245 of 452)",
        favourable_class=1,
        papers=("MD-PSO",),
        loader="_science:load_arrhythmia",
        files=("arrhythmia.data.gz",),
        options=(
            Option(
                "missing",
                "impute",
                "the 5 columns with '?': 'impute' (median, 262 features as MD-PSO) or "
                "'drop' them (257)",
                ("impute", "drop"),
            ),
        ),
    ),
    DatasetInfo(
        name="lsvt",
        title="LSVT Voice Rehabilitation",
        description=(
            "126 phonations of 14 Parkinson's patients, 310 dysphonia measures; rehabilitation "
            "acceptable or not."
        ),
        citation=(
            "Tsanas, A., Little, M. A., Fox, C. & Ramig, L. O. (2014). Objective automatic "
            "assessment of rehabilitative speech treatment in Parkinson's disease. IEEE TNSRE "
            "22(1), 181-190. Dataset: https://doi.org/10.24432/C5Z89F"
        ),
        licence=_UCI,
        source="https://archive.ics.uci.edu/dataset/282",
        bundled=True,
        n_rows=126,
        n_features=310,
        target="acceptable",
        positive="acceptable phonation (42 of 126)",
        favourable_class=1,
        papers=("MD-PSO",),
        loader="_science:load_lsvt",
        files=("lsvt_voice_rehabilitation.csv.gz",),
        aliases=("lsvt_voice",),
    ),
    DatasetInfo(
        name="sba",
        title="SBA loans (case-study subset)",
        description=(
            "2,102 SBA-guaranteed loans (California, real estate sector, 1989-2012); charged "
            "off or paid in full."
        ),
        citation=(
            'Li, M., Mickel, A. & Taylor, S. (2018). "Should this loan be approved or denied?": '
            "A large dataset with class assignment guidelines. Journal of Statistics Education "
            "26(1), 55-66. https://doi.org/10.1080/10691898.2018.1434342"
        ),
        licence=(
            "Public U.S. Small Business Administration records, distributed as JSE "
            "supplementary material (exact licence not stated)"
        ),
        source="Journal of Statistics Education supplementary data (SBAcase.11.13.17.csv)",
        bundled=True,
        n_rows=2102,
        n_features=11,
        target="Default",
        positive="charged off (686 of 2,102)",
        favourable_class=0,
        papers=("L2C",),
        loader="_credit:load_sba",
        files=("SBAcase.csv.gz",),
        options=(
            Option(
                "features",
                "default",
                "'default' (11, no target leak) or L2C's 13 columns ('l2c')",
                ("default", "l2c"),
            ),
        ),
        aliases=("sba_loans",),
    ),
    DatasetInfo(
        name="heloc",
        title="HELOC (FICO Explainable ML Challenge)",
        description="Home-equity line of credit applications; risk performance good or bad.",
        citation=(
            "FICO (2018). Explainable Machine Learning Challenge: Home Equity Line of Credit "
            "(HELOC) dataset"
        ),
        licence=(
            "FICO xML Challenge data licence (terms must be accepted; redistribution not allowed)"
        ),
        source="https://community.fico.com/s/explainable-machine-learning-challenge",
        bundled=False,
        n_rows=9871,
        n_features=23,
        target="RiskPerformance",
        positive="Good (4,735 of 9,871)",
        favourable_class=1,
        papers=("CE-OCL (appendix, via CARLA)",),
        loader="_credit:load_heloc",
        files=("heloc_dataset_v1.csv",),
        options=(
            Option("path", None, "the user's heloc_dataset_v1.csv, or its folder"),
            Option(
                "special",
                "keep",
                "special values -7/-8/-9: 'keep' them, or 'median'-impute",
                ("keep", "median"),
            ),
        ),
        env_var="COUNTERFACT_HELOC",
        obtain=(
            "FICO's Explainable Machine Learning Challenge page "
            "(https://community.fico.com/s/explainable-machine-learning-challenge; accept "
            "FICO's terms, download heloc_dataset_v1.csv)"
        ),
        aliases=("fico",),
    ),
    DatasetInfo(
        name="give_me_some_credit",
        title="Give Me Some Credit (Kaggle 2011)",
        description=(
            "150,000 borrowers; serious delinquency within two years (rows with missing values "
            "dropped)."
        ),
        citation="Kaggle (2011). Give Me Some Credit. https://www.kaggle.com/c/GiveMeSomeCredit",
        licence="Kaggle competition rules (redistribution not allowed)",
        source="https://www.kaggle.com/c/GiveMeSomeCredit/data",
        bundled=False,
        n_rows=120269,
        n_features=10,
        target="SeriousDlqin2yrs",
        positive="serious delinquency (8,357 of 120,269)",
        favourable_class=0,
        papers=("CE-OCL (appendix, via CARLA)",),
        loader="_credit:load_give_me_some_credit",
        files=("cs-training.csv",),
        options=(Option("path", None, "the user's cs-training.csv (or .csv.zip), or its folder"),),
        env_var="COUNTERFACT_GIVE_ME_SOME_CREDIT",
        obtain=(
            "Kaggle (https://www.kaggle.com/c/GiveMeSomeCredit/data, accept the competition "
            "rules, download cs-training.csv)"
        ),
        aliases=("gmsc", "givemesomecredit"),
    ),
    DatasetInfo(
        name="bank_loan",
        title="Bank Personal Loan Modelling (Thera Bank)",
        description=(
            "5,000 bank customers; accepted a personal loan offer or not (ID and ZIP Code dropped)."
        ),
        citation=(
            "Kaggle 'Bank Personal Loan Modelling' (Thera Bank), used by UFCE (Suffian et al.)"
        ),
        licence="unknown (Kaggle upload with no stated licence)",
        source="https://www.kaggle.com/datasets/itsmesunil/bank-loan-modelling",
        bundled=False,
        n_rows=5000,
        n_features=11,
        target="Personal Loan",
        positive="accepted the loan (480 of 5,000)",
        favourable_class=1,
        papers=("UFCE",),
        loader="_credit:load_bank_loan",
        files=("Bank_Personal_Loan_Modelling.csv",),
        options=(
            Option("path", None, "the user's Bank_Personal_Loan_Modelling.csv, or its folder"),
        ),
        env_var="COUNTERFACT_BANK_LOAN",
        obtain=(
            "Kaggle ('Bank Loan Modelling' / 'Bank Personal Loan Modelling', e.g. "
            "https://www.kaggle.com/datasets/itsmesunil/bank-loan-modelling; save the data "
            "sheet as Bank_Personal_Loan_Modelling.csv)"
        ),
        aliases=("bank", "personal_loan"),
    ),
    DatasetInfo(
        name="movie_oscar",
        title="Movie classification (Start-Tech Oscar)",
        description="506 films: budget, ratings, marketing; nominated for an Oscar or not.",
        citation=(
            "Start-Tech Academy course data 'Movie_classification.csv' (Kaggle copies), used by "
            "UFCE (Suffian et al.)"
        ),
        licence="unknown (course material republished on Kaggle, no stated licence)",
        source="Kaggle copies of 'Movie_classification.csv' (Start-Tech Academy)",
        bundled=False,
        n_rows=506,
        n_features=18,
        target="Start_Tech_Oscar",
        positive="nominated (276 of 506)",
        favourable_class=1,
        papers=("UFCE",),
        loader="_science:load_movie_oscar",
        files=("Movie_classification.csv",),
        options=(
            Option("path", None, "the user's Movie_classification.csv, or its folder"),
            Option(
                "missing",
                "median",
                "the 14 missing Time_taken values: 'median'-impute (506 rows) or 'drop' the "
                "rows (492)",
                ("median", "drop"),
            ),
        ),
        env_var="COUNTERFACT_MOVIE_OSCAR",
        obtain=(
            "Kaggle (search 'Movie_classification.csv', Start-Tech Academy's machine-learning "
            "course data)"
        ),
        aliases=("movie",),
    ),
)

INFO: dict[str, DatasetInfo] = {i.name: i for i in _INFOS}
ALIASES: dict[str, str] = {a: i.name for i in _INFOS for a in i.aliases}
